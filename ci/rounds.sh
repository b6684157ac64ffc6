#!/usr/bin/env bash
# Runs the suites N times in a row on fresh clusters of one provider and
# prints the claims whose verdict differs between the rounds (timing claims
# aside), each round's time, and what was left on the machine after each.
#
#   ci/rounds.sh [N] [provider]      e.g. ci/rounds.sh 10 local; ci/rounds.sh 5 kind
#
# Exit code 1 when a verdict differs or a round left something behind.
set -uo pipefail
cd "$(dirname "$0")/.."
n=${1:-10}
provider=${2:-local}
bin=_output/bin/kubeproof
out=_output/rounds/$provider
rm -rf "$out" && mkdir -p "$out"

# What a cluster can leave: kubeproof's processes, mounts, network
# namespaces and links, state directories.
snapshot() {
  {
    pgrep -a -f '(kube-apiserver|kube-controller-manager|kube-scheduler|kubelet|kube-proxy|etcd|containerd|dockerd|kubeproof-specs.test)( |$)' | awk '{print $2}' | sort
    grep -E 'kubeproof' /proc/mounts | awk '{print $2}' | sort
    ip netns list 2>/dev/null | grep kubeproof
    ip -o link 2>/dev/null | grep -oE ' kp-[^:@]+' | sort
    ls /var/lib/kubeproof /run/kubeproof 2>/dev/null
  } 2>/dev/null
}

before=$(snapshot)
status=0
dirs=()
printf '| round | exit | seconds | left behind |\n|---|---|---|---|\n' > "$out/rounds.md"
for i in $(seq 1 "$n"); do
  dir=$out/round-$i
  start=$(date +%s)
  "$bin" run --provider "$provider" --parallel 4 --report-dir "$dir" > "$dir.log" 2>&1
  code=$?
  took=$(( $(date +%s) - start ))
  left=$(diff <(echo "$before") <(snapshot) | grep '^>' | tr '\n' ' ')
  [ -n "$left" ] && status=1
  [ "$code" = 0 ] || status=1
  printf '| %d | %d | %d | %s |\n' "$i" "$code" "$took" "${left:-nothing}" | tee -a "$out/rounds.md"
  dirs+=("$dir")
done
echo
echo "Claims whose verdict differs between the $n rounds (timing claims aside):"
"$bin" report diff "${dirs[@]}" | tee "$out/differences.md"
[ "${PIPESTATUS[0]}" = 0 ] || status=1
exit $status
