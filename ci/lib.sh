# shellcheck shell=bash
# Shell helpers of the ci/ scripts (sourced).

# start_registry KUBEPROOF PORT DIR LISTEN...: runs `kubeproof registry
# serve` in the background with its blobs in DIR, sets regpid, and waits
# until it answers on 127.0.0.1:PORT.
start_registry() {
  local kp=$1 port=$2 dir=$3
  shift 3
  local listen=()
  for l in "$@"; do listen+=(--listen "$l"); done
  "$kp" registry serve "${listen[@]}" --dir "$dir" &
  regpid=$!
  for _ in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    kill -0 "$regpid" 2>/dev/null || { echo "the registry did not start" >&2; return 1; }
    sleep 0.1
  done
  echo "the registry did not answer on 127.0.0.1:$port within 10 s" >&2
  return 1
}
