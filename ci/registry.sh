#!/usr/bin/env bash
# Checks a cluster kubeproof made as if it had not (issue 17): the cluster's
# nodes get no kubeproof images loaded and pull them from a registry served on
# this machine; the suites reach it only through a kubeconfig. One spec that
# runs the images (KUBEPROOF_REGISTRY_SPECS, default podflow-create) runs.
#
#   ci/registry.sh [provider]     local (default) or kind
#
# 1. Without --image-registry: exit 0, no `error` verdict, the specs that run
#    kubeproof's images not checkable, naming --image-registry.
# 2. With it: exit 0, no `error`, no claim left not checkable for the images.
# 3. Nothing of either run left in the cluster (kubeproof cleanup --dry-run).
# The cluster and the registry are removed at the end, also on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=ci/lib.sh
source ci/lib.sh
provider=${1:-local}
kp=_output/bin/kubeproof
name=kpreg
port=${KUBEPROOF_REGISTRY_PORT:-5001}
registry=127.0.0.1:$port/kubeproof
out=_output/registry-$provider
rm -rf "$out" && mkdir -p "$out"

regpid=
cleanup() {
  [ -n "$regpid" ] && kill "$regpid" 2>/dev/null && wait "$regpid" 2>/dev/null
  "$kp" down --provider "$provider" --name "$name" || true
}
trap cleanup EXIT

fail() { echo "ci/registry.sh: $*" >&2; exit 1; }

# --without registry: the registry kubeproof serves beside the clusters it
# makes is not part of a cluster it did not make. (It would leave this
# script's port to it: --image-registry names it.)
"$kp" up --provider "$provider" --name "$name" --image-registry "$registry" --insecure-registry --load-images=false --without registry
eval "$("$kp" env --provider "$provider" --name "$name")"
[ -n "${KUBEPROOF_NODE_REGISTRY:-}" ] || fail "kubeproof env names no KUBEPROOF_NODE_REGISTRY"
start_registry "$kp" "$port" "$out/blobs" "127.0.0.1:$port" "$KUBEPROOF_NODE_REGISTRY" || fail "no registry"

verdict_count() { # verdict report-log -> the count in the run's summary, 0 if absent
  awk -v v="$1" '$1 == v && $2 ~ /^[0-9]+$/ {print $2; found=1} END {if (!found) print 0}' "$2"
}

# One spec that runs kubeproof's images is enough to see both ways: the
# whole suite through a kubeconfig with pushed images is make incluster's
# and make release-check's run.
specs=${KUBEPROOF_REGISTRY_SPECS:-spec:podflow-create}

echo "== 1. through the kubeconfig, without a registry"
"$kp" run --provider kubeconfig --label-filter "$specs" --parallel 4 --report-dir "$out/without" | tee "$out/without.log"
[ "$(verdict_count error "$out/without.log")" = 0 ] || fail "an error verdict without the registry"
grep -q -- "--image-registry" "$out/without/claims.md" || fail "no claim names --image-registry"

echo "== 2. through the kubeconfig, with the registry"
"$kp" run --provider kubeconfig --label-filter "$specs" --disposable --image-registry "$registry" --insecure-registry --parallel 4 --report-dir "$out/with" | tee "$out/with.log"
[ "$(verdict_count error "$out/with.log")" = 0 ] || fail "an error verdict with the registry"
if grep -q "kubeproof's images, which the nodes do not have" "$out/with/claims.md"; then
  fail "claims still not checkable for the images with the registry"
fi

echo "== 3. nothing left in the cluster"
"$kp" cleanup --provider kubeconfig --dry-run 2>&1 | tee "$out/cleanup.log"
grep -q "nothing of kubeproof's" "$out/cleanup.log" || fail "the runs left objects in the cluster"
echo "ci/registry.sh: ok ($provider)"
