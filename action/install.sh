#!/usr/bin/env bash
# The Action's install step (action.yml): puts kubeproof on the job's PATH.
#
# Which kubeproof: the input `version` (KP_VERSION) when it names a release;
# "source" builds the action's own checkout with Go; empty (the default)
# means the release the action is pinned at (`uses: kubeproof/kubeproof@v0.1.0`
# installs v0.1.0) or, when it is pinned at a branch or commit or used from
# a checkout (`uses: ./`), that checkout, built with Go.
#
# Where the action is pinned: github.action_repository and action_ref
# (ACTION_REPO, ACTION_REF), which the runner may leave empty inside a
# composite action; then the action's own path, which the runner makes
# .../_actions/OWNER/REPO/REF.
#
# A release is downloaded from RELEASE_URL/VERSION (default: the action's
# repository's GitHub releases; KUBEPROOF_RELEASE_URL, or the input
# release-url, names a mirror), its archive checked against the release's
# SHA256SUMS before it is unpacked.
set -euo pipefail

: "${GITHUB_ACTION_PATH:?}" "${GITHUB_PATH:?}" "${RUNNER_TEMP:?}"
# Output: version, the release installed or source-<digest of go.sum>.
version=${KP_VERSION:-}
repo=${ACTION_REPO:-} ref=${ACTION_REF:-}
if [ -z "$ref" ]; then
  case $GITHUB_ACTION_PATH in
  */_actions/*/*/*)
    rest=${GITHUB_ACTION_PATH#*/_actions/}
    owner=${rest%%/*} rest=${rest#*/}
    name=${rest%%/*} rest=${rest#*/}
    ref=${rest%%/*}
    [ -n "$repo" ] || repo=$owner/$name
    ;;
  esac
fi
repo=${repo:-kubeproof/kubeproof}

if [ -z "$version" ]; then
  case $ref in
  v[0-9]*.[0-9]*.[0-9]*) version=$ref ;;
  *) version=source ;;
  esac
fi

if [ "$version" = source ]; then
  echo "kubeproof: building the action's checkout ($GITHUB_ACTION_PATH${ref:+ at $ref}) with $(go version 2>/dev/null || echo 'no Go: add actions/setup-go')"
  # VERSION is the Makefile's stamp: the ref the action is pinned at, else
  # the checkout's own `git describe`.
  make -C "$GITHUB_ACTION_PATH" build ${ref:+VERSION="$ref"}
  bin=$(cd "$GITHUB_ACTION_PATH/_output/bin" && pwd)
  # What the build depends on, for the cache key of what it builds.
  version=source-$(sha256sum "$GITHUB_ACTION_PATH/go.sum" | cut -c1-12)
else
  case $(uname -m) in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "::error::kubeproof releases are for amd64 and arm64, not $(uname -m)"; exit 1 ;;
  esac
  os=$(uname -s | tr '[:upper:]' '[:lower:]')
  archive=kubeproof-$version-$os-$arch.tar.gz
  base=${RELEASE_URL:-${KUBEPROOF_RELEASE_URL:-https://github.com/$repo/releases/download}}
  dir=$RUNNER_TEMP/kubeproof-$version
  rm -rf "$dir" && mkdir -p "$dir"
  echo "kubeproof: downloading $base/$version/$archive"
  curl -fsSL --retry 3 -o "$dir/$archive" "$base/$version/$archive"
  curl -fsSL --retry 3 -o "$dir/SHA256SUMS" "$base/$version/SHA256SUMS"
  line=$(grep " $archive\$" "$dir/SHA256SUMS") || { echo "::error::SHA256SUMS of $version has no line for $archive"; exit 1; }
  (cd "$dir" && sha256sum --check --strict <<<"$line")
  mkdir -p "$dir/unpacked"
  tar -xzf "$dir/$archive" -C "$dir/unpacked"
  # The archive holds kubeproof and its images' programs, at its top or in
  # one folder: kubeproof finds the programs beside itself.
  kp=$(find "$dir/unpacked" -name kubeproof -type f -perm -u+x | head -n 1)
  [ -n "$kp" ] || { echo "::error::$archive holds no kubeproof"; exit 1; }
  bin=$(dirname "$kp")
fi
echo "$bin" >>"$GITHUB_PATH"
if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "version=$version" >>"$GITHUB_OUTPUT"; fi
echo "kubeproof: $("$bin/kubeproof" version)"
