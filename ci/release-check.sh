#!/usr/bin/env bash
# Checks a snapshot of kubeproof's release as its users get it (make
# release-check, part of make test):
#
# 1. A local cluster whose node has none of kubeproof's images (as on a
#    cluster kubeproof did not make); its containerd pulls from a registry
#    served on this machine, which stands in for the public one.
# 2. The snapshot release (goreleaser, .goreleaser.yaml), that registry
#    stamped into it as the release's: its archives for linux and darwin,
#    amd64 and arm64, SHA256SUMS, the krew manifest, and the images, pushed
#    there as one index of linux/amd64 and linux/arm64 each
#    (ci/releasecheck dist checks them all, down to the images' programs
#    being the archives').
# 3. krew installs the plugin from the manifest into an empty krew root.
# 4. The installed `kubectl kubeproof run`, with no provider flag, reaching
#    the cluster through its kubeconfig alone ($KUBECONFIG; --disposable, as
#    nobody else uses it): its first line
#    names kubectl's current context; exit code 0 (every selected spec ran;
#    refuted claims do not fail a run without --fail-on-refuted); no
#    claim left not checkable for want of the images, none judged error, at
#    least RELEASE_MIN_DECIDED percent decided; nothing of it left in the
#    cluster (kubectl kubeproof cleanup --dry-run).
# 5. `go install github.com/kubeproof/kubeproof/cmd/kubeproof@V` from a
#    module proxy serving this commit: that kubeproof, which has none of the
#    programs beside it, builds them from its module source and lists its
#    images; with a clean tree, its programs are the archives' byte for byte.
#
# Each step's time is printed. The cluster, the registry and every
# temporary directory are removed at the end, also on failure or Ctrl-C.
#
#   ci/release-check.sh GORELEASER KREW
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=ci/lib.sh
source ci/lib.sh
goreleaser=$(realpath "$1") krew=$(realpath "$2")
kp=$PWD/_output/bin/kubeproof
name=kprel
port=${KUBEPROOF_REGISTRY_PORT:-5003}
registry=127.0.0.1:$port/kubeproof
min_decided=${RELEASE_MIN_DECIDED:-53}
out=$PWD/_output/release-check
# The go install step's module cache outlives the check: the dependencies
# are unpacked once, not at every run.
gomodcache=$PWD/_output/release-check-gomodcache
rm -rf "$out" && mkdir -p "$out"
work=$(mktemp -d)

regpid=''
cleanup() {
  [ -n "$regpid" ] && kill "$regpid" 2>/dev/null && wait "$regpid" 2>/dev/null
  "$kp" down --name "$name" || true
  rm -rf "$work"
  return 0
}
trap cleanup EXIT
fail() { echo "ci/release-check.sh: $*" >&2; exit 1; }
step() { echo "== $* ($SECONDS s)"; }
go build -o "$work/releasecheck" ./ci/releasecheck

step "1. a local cluster without kubeproof's images, pulling from $registry"
"$kp" up --name "$name" --apiserver-port 7943 --pod-cidr 10.243.0.0/16 --service-cidr 10.106.0.0/16 \
  --image-registry "$registry" --insecure-registry --load-images=false
eval "$("$kp" env --name "$name")"
# The run reaches the cluster through its kubeconfig alone.
unset KUBEPROOF_CLUSTER_INFO
start_registry "$kp" "$port" "$work/blobs" "127.0.0.1:$port" "$KUBEPROOF_NODE_REGISTRY" || fail "no registry"

step "2. the snapshot release, $registry as its registry"
KUBEPROOF_RELEASE_REGISTRY=$registry "$goreleaser" release --snapshot --clean >"$out/goreleaser.log" 2>&1 ||
  { tail -n 30 "$out/goreleaser.log"; fail "goreleaser failed (its log: $out/goreleaser.log)"; }
version=v$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' _output/goreleaser/metadata.json)
[ "$version" != v ] || fail "goreleaser's metadata.json names no version"
ls -l _output/goreleaser/*.tar.gz _output/goreleaser/SHA256SUMS _output/goreleaser/krew/kubeproof.yaml
"$work/releasecheck" dist --dist _output/goreleaser --version "$version" --registry "$registry"

step "3. krew installs kubectl kubeproof $version"
arch=$(go env GOARCH)
export KREW_ROOT=$work/krew
"$krew" install --manifest=_output/goreleaser/krew/kubeproof.yaml \
  --archive="_output/goreleaser/kubeproof-$version-linux-$arch.tar.gz" >"$out/krew.log" 2>&1 ||
  { cat "$out/krew.log"; fail "krew could not install the plugin"; }
export PATH=$KREW_ROOT/bin:$PATH
plugin_version=$(kubectl kubeproof version)
echo "kubectl kubeproof version: $plugin_version"
case $plugin_version in
  "kubeproof $version (commit "*", linux/$arch;"*) ;;
  *) fail "the plugin reports another version or platform than $version, linux/$arch" ;;
esac

step "4. kubectl kubeproof run, the cluster reached through \$KUBECONFIG alone"
set +e
# --disposable: the cluster was made for this check, nobody else uses it.
(cd "$work" && kubectl kubeproof run --disposable --parallel 4 --report-dir "$out/report") 2>&1 | tee "$out/run.log"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" = 0 ] || fail "kubectl kubeproof run exited $rc, want 0"
first=$(head -n 1 "$out/run.log")
case $first in
  " • cluster: kubectl's current context \""*"\" in $KUBECONFIG (https://"*"; invoked as kubectl kubeproof)") ;;
  *) fail "the run's first line does not say it checks kubectl's current context: $first" ;;
esac
grep -q "images: the nodes pull $registry/testapp:$version" "$out/run.log" ||
  fail "the run does not say its nodes pull the images from $registry"
if grep -q "kubeproof's images, which the nodes do not have" "$out/report/claims.md"; then
  fail "claims not checkable for the images the nodes should have pulled from $registry"
fi
# Too few claims decided fails the check, after its other steps: they
# say what else holds.
undecided=''
"$work/releasecheck" report --dir "$out/report" --min-decided "$min_decided" || undecided="fewer than $min_decided% of the claims decided"

step "4b. the images named in the environment, at a registry path that has none"
# $KUBEPROOF_IMAGE_REGISTRY stands before the release's registry; nothing
# is pushed there, so the specs that run the images are not checkable,
# naming the images and the registry, and the run still exits 0.
nowhere=127.0.0.1:$port/nowhere
set +e
(cd "$work" && KUBEPROOF_IMAGE_REGISTRY=$nowhere kubectl kubeproof run --label-filter spec:podflow-create --report-dir "$out/report-nowhere") >"$out/run-nowhere.log" 2>&1
rc=$?
set -e
[ "$rc" = 0 ] || { tail -n 20 "$out/run-nowhere.log"; fail "the run with images nowhere exited $rc, want 0"; }
grep -q "images: the nodes pull $nowhere/testapp:$version and $nowhere/webhook:$version from $nowhere (\$KUBEPROOF_IMAGE_REGISTRY)" "$out/run-nowhere.log" ||
  fail "the run does not say it takes the images from \$KUBEPROOF_IMAGE_REGISTRY"
grep -q "kubeproof's images, which the nodes do not have:.*could not pull kubeproof's images ($nowhere/testapp:$version, $nowhere/webhook:$version) from $nowhere" "$out/report-nowhere/claims.md" ||
  fail "no claim is not checkable naming the images and the registry"
echo "the specs that run the images: not checkable, naming $nowhere/testapp:$version and its registry"
kubectl kubeproof cleanup --dry-run 2>&1 | tee "$out/cleanup.log"
grep -q "nothing of kubeproof's" "$out/cleanup.log" || fail "the runs left objects in the cluster"

step "5. go install github.com/kubeproof/kubeproof/cmd/kubeproof@<this commit>"
gi_version=v0.0.0-releasecheck.$(git rev-parse --short=12 HEAD)
"$work/releasecheck" modproxy --out "$work/proxy" --version "$gi_version"
goenv=(GOMODCACHE="$gomodcache" GOPROXY="file://$work/proxy,file://$(go env GOMODCACHE)/cache/download" GOSUMDB=off
  GOFLAGS="-modcacherw -trimpath" GOBIN="$work/gobin" KUBEPROOF_CACHE_DIR="$work/cache")
(cd "$work" && env "${goenv[@]}" go install "github.com/kubeproof/kubeproof/cmd/kubeproof@$gi_version")
env "${goenv[@]}" "$work/gobin/kubeproof" version
env "${goenv[@]}" "$work/gobin/kubeproof" image list | tee "$out/goinstall-images.txt"
[ "$(wc -l <"$out/goinstall-images.txt")" = 2 ] || fail "the go-installed kubeproof lists no images"
if [ -z "$(git status --porcelain)" ]; then
  tar -xzf "_output/goreleaser/kubeproof-$version-linux-$arch.tar.gz" -C "$work" kubeproof-testapp kubeproof-webhook
  for p in kubeproof-testapp kubeproof-webhook; do
    cmp "$work/$p" "$work/cache/programs/$gi_version/linux_$arch/$p" ||
      fail "$p built by the go-installed kubeproof differs from the release's"
  done
  echo "the go-installed kubeproof's programs are the release's, byte for byte"
else
  echo "the tree has changes HEAD lacks: the go-installed kubeproof's programs (HEAD) are not compared with the release's (the tree)"
fi
[ -z "$undecided" ] || fail "$undecided (see above)"
step "ci/release-check.sh: ok"
