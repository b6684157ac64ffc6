#!/usr/bin/env bash
# Checks the release `make dist` made as a user gets it: the checksums hold,
# and krew (built from its Go module) installs the kubectl plugin from the
# manifest and this machine's archive into an empty krew root, from which
# `kubectl kubeproof version` runs. Leaves nothing behind.
# Usage: ci/dist-check.sh DIST_DIR VERSION KREW
set -euo pipefail
dist=$(cd "$1" && pwd) version=$2 krew=$(realpath "$3")
arch=$(go env GOARCH)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$dist" && sha256sum --check --quiet SHA256SUMS)
echo "dist-check: checksums of $(wc -l < "$dist/SHA256SUMS") archives hold"

export KREW_ROOT=$work/krew
"$krew" install --manifest="$dist/kubeproof.yaml" --archive="$dist/kubeproof-$version-linux-$arch.tar.gz" >"$work/krew.log" 2>&1 ||
  { cat "$work/krew.log"; exit 1; }
echo "dist-check: krew installed kubeproof $version into an empty krew root"
export PATH=$KREW_ROOT/bin:$PATH
out=$(kubectl kubeproof version)
echo "dist-check: kubectl kubeproof version: $out"
case $out in
  *"$version"*) ;;
  *) echo "dist-check: the plugin reports another version than $version" >&2; exit 1 ;;
esac
# All of it: head would close the pipe on a long help (SIGPIPE under pipefail).
help=$(kubectl kubeproof --help)
case $help in
  *"kubectl kubeproof run"*|*"kubectl kubeproof [command]"*) echo "dist-check: its help names it kubectl kubeproof" ;;
  *) echo "dist-check: the plugin's help does not name it kubectl kubeproof:" >&2; echo "$help" >&2; exit 1 ;;
esac
