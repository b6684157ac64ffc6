#!/usr/bin/env bash
# actionlint on the GitHub Actions recipe, on the composite action it uses
# (action.yml) and on this repository's own workflows (.github/workflows:
# the release): actionlint reads a local action's metadata only in a
# repository laid out as GitHub's, so all are checked in a copy laid out so.
# Usage: ci/actionlint.sh ACTIONLINT
set -euo pipefail
actionlint=$(realpath "$1")
cd "$(dirname "$0")/.."
# actionlint checks the steps' scripts with shellcheck (Debian's), if found.
if ! command -v shellcheck >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends shellcheck >/dev/null ||
    echo "ci/actionlint.sh: could not install shellcheck; the scripts go unchecked" >&2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/.github/workflows"
cp action.yml "$tmp/"
cp ci/github-actions.yml "$tmp/.github/workflows/kubeproof.yml"
cp .github/workflows/*.yml "$tmp/.github/workflows/"
git -C "$tmp" init -q
cd "$tmp" && "$actionlint" -no-color
