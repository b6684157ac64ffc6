#!/usr/bin/env bash
# Run by goreleaser before it builds anything (.goreleaser.yaml's before
# hook): builds the programs of kubeproof's images for linux/amd64 and
# linux/arm64 into _output/release/programs/linux_ARCH, which the linux
# archives carry, and, when the release names a registry, pushes the images
# the specs run there, tagged TAG, one index of both platforms each: made
# by kubeproof itself (kubeproof image push), in the layout every cluster
# kubeproof makes gets (/kubeproof-testapp, ...), so the images hold the
# very files the archives carry.
#
#   ci/release-images.sh TAG [REGISTRY]
set -euo pipefail
cd "$(dirname "$0")/.."
tag=$1 registry=${2:-}
out=_output/release
rm -rf "$out" && mkdir -p "$out/programs"
# Every program but kubeproof (as the Makefile's PROGRAMS), built as
# `make build` builds them: static, no paths, no VCS data, no version.
mapfile -t programs < <(go list -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' ./cmd/... ./internal/provision/cmd/... | grep -v '/cmd/kubeproof$')
for arch in amd64 arm64; do
  CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath -buildvcs=false -ldflags "-s -w" -o "$out/programs/linux_$arch/" "${programs[@]}"
done
echo "ci/release-images.sh: ${#programs[@]} programs for linux/amd64 and linux/arm64 in $out/programs"
if [ -z "$registry" ]; then
  echo "ci/release-images.sh: no KUBEPROOF_RELEASE_REGISTRY: no images pushed, and the binaries name no registry"
  exit 0
fi
CGO_ENABLED=0 go build -trimpath -buildvcs=false -o "$out/kubeproof" ./cmd/kubeproof
"$out/kubeproof" image push --registry "$registry" --tag "$tag" --platform linux/amd64 --platform linux/arm64 --programs "$out/programs"
