#!/usr/bin/env bash
# actionlint on the GitHub Actions recipes (docs/ci/*.yml), the workflow
# that uses the action from a checkout (ci/act/source.yml), this
# repository's own workflows (.github/workflows: the release) and the
# composite action (action.yml, its scripts with shellcheck): actionlint
# reads a local action's metadata only in a repository laid out as GitHub's
# (.github/workflows), so they are checked in a copy laid out so.
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
if command -v shellcheck >/dev/null; then
  shellcheck action/*.sh
fi
cp action.yml "$tmp/"
for f in docs/ci/*.yml ci/act/source.yml; do
  cp "$f" "$tmp/.github/workflows/$(basename "$(dirname "$f")")-$(basename "$f")"
done
cp .github/workflows/*.yml "$tmp/.github/workflows/"
git -C "$tmp" init -q
cd "$tmp" && "$actionlint" -no-color
