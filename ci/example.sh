#!/usr/bin/env bash
# The worked examples of docs/examples (issue 34: pod-lifecycle; issue 43:
# deployment-rollout): documents nobody wrote for kubeproof's own specs,
# checked from their claims files alone (probes, no Go). Every testable
# sentence must be decided: no claim of an example may end open or error,
# and not checkable only where its not-checkable.txt says so for the
# provider (a path of Kubernetes' node layout on a provider whose node keeps
# it elsewhere), with the reason it names. Each example runs on a cluster
# of its own, one after the other.
#
#   ci/example.sh [provider] [example...]   local (default) or kind; all examples by default
set -euo pipefail
cd "$(dirname "$0")/.."
provider=${1:-local}
shift || true
examples=("$@")
[ ${#examples[@]} -gt 0 ] || examples=(pod-lifecycle deployment-rollout)
kp=_output/bin/kubeproof
for example in "${examples[@]}"; do
dir=docs/examples/$example
out=_output/report-example-$example-$provider
"$kp" claims lint "$dir/claims.yaml" --document "$dir/document.md"
"$kp" run --provider "$provider" --claims-file "$dir/claims.yaml" --document "$dir/document.md" \
  --report-dir "$out" --parallel 4 | tee "$out.log"
undecided=$(awk '($1 == "error" || $1 == "open") && $2 ~ /^[0-9]+$/ {n += $2} END {print n + 0}' "$out.log")
if [ "$undecided" != 0 ]; then
  echo "ci/example.sh: $undecided claims of $example were not decided on $provider (see $out/claims.md)" >&2
  exit 1
fi
# Not checkable: exactly the claims listed for the provider, each for its reason.
got=$(jq -r '.documents[].claims[] | select(.verdict == "not-checkable") | .claim.id + "\t" + .reason' "$out/claims.json" | sort)
want=""
if [ -f "$dir/not-checkable.txt" ]; then
  want=$(awk -v p="$provider" '$1 == p {id = $2; $1 = ""; $2 = ""; sub(/^ +/, ""); print id "\t" $0}' "$dir/not-checkable.txt" | sort)
fi
bad=0
while IFS=$'\t' read -r id reason; do
  [ -n "$id" ] || continue
  line=$(printf '%s\n' "$want" | awk -F'\t' -v id="$id" '$1 == id')
  if [ -z "$line" ]; then
    echo "ci/example.sh: $id is not checkable on $provider, and not-checkable.txt does not list it: $reason" >&2
    bad=1
  elif [[ "$reason" != *"${line#*$'\t'}"* ]]; then
    echo "ci/example.sh: $id is not checkable on $provider for another reason than not-checkable.txt gives: $reason" >&2
    bad=1
  fi
done <<< "$got"
while IFS=$'\t' read -r id _; do
  [ -n "$id" ] || continue
  if ! printf '%s\n' "$got" | awk -F'\t' -v id="$id" '$1 == id {f = 1} END {exit !f}'; then
    echo "ci/example.sh: not-checkable.txt lists $id for $provider, but it was decided (see $out/claims.md)" >&2
    bad=1
  fi
done <<< "$want"
[ "$bad" = 0 ] || exit 1
echo "ci/example.sh: $example: every testable sentence decided ($provider), $(printf '%s\n' "$want" | grep -c . || true) not checkable as listed"
done
