#!/usr/bin/env bash
# Checks kubeproof's own container image (kubeproof image build-cli) as a user
# runs it: loaded into Docker, run with a kubeconfig mounted, against a local
# cluster kubeproof made and treats as one it did not (its nodes pull
# kubeproof's images from a registry served here, as in ci/registry.sh).
# The run in the container must exit 0 with no `error` verdict, and leave its
# report in the mounted directory. Docker is the machine's, else kubeproof's
# private daemon, started and stopped here. Everything made is removed, also
# on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=ci/lib.sh
source ci/lib.sh
kp=$PWD/_output/bin/kubeproof
name=kpimg
port=${KUBEPROOF_REGISTRY_PORT:-5002}
registry=127.0.0.1:$port/kubeproof
out=$PWD/_output/image-check
tag=kubeproof/kubeproof:check
rm -rf "$out" && mkdir -p "$out/reports"

regpid='' started_dockerd=''
cleanup() {
  [ -n "$regpid" ] && kill "$regpid" 2>/dev/null && wait "$regpid" 2>/dev/null
  docker rmi -f "$tag" >/dev/null 2>&1 || true
  "$kp" down --name "$name" || true
  [ -n "$started_dockerd" ] && "$kp" dockerd stop
  return 0
}
trap cleanup EXIT
fail() { echo "ci/image.sh: $*" >&2; exit 1; }

"$kp" image build-cli --archive "$out/kubeproof-image.tar" --tag "$tag"
ls -l "$out/kubeproof-image.tar"

if status=$("$kp" dockerd status 2>/dev/null); then
  export "${status#running; }"
elif ! docker info >/dev/null 2>&1; then
  export "$("$kp" dockerd start | grep '^DOCKER_HOST=')"
  started_dockerd=1
fi
docker load -i "$out/kubeproof-image.tar"

"$kp" up --name "$name" --apiserver-port 7843 --pod-cidr 10.243.0.0/16 --service-cidr 10.104.0.0/16 \
  --image-registry "$registry" --insecure-registry --load-images=false
eval "$("$kp" env --name "$name")"
start_registry "$kp" "$port" "$out/blobs" "127.0.0.1:$port" "$KUBEPROOF_NODE_REGISTRY" || fail "no registry"

echo "== the image, through the kubeconfig"
set +e
docker run --rm --network host -v "$KUBECONFIG:/kubeconfig:ro" -v "$out/reports:/reports" "$tag" \
  run --provider kubeconfig --disposable --image-registry "$registry" --insecure-registry --parallel 4 --report-dir /reports \
  | tee "$out/run.log"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" = 0 ] || fail "the image's run exited $rc"
[ -f "$out/reports/claims.json" ] || fail "the container left no claims.json in the mounted report directory"
for verdict in error not-run; do
  if awk -v v="$verdict" '$1 == v && $2 ~ /^[0-9]+$/ {found=1} END {exit !found}' "$out/run.log"; then
    fail "$verdict verdicts from the image's run"
  fi
done
echo "ci/image.sh: ok"
