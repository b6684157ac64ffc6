#!/usr/bin/env bash
# The worked example of docs/examples/pod-lifecycle (issue 34): a document
# nobody wrote for kubeproof's own specs, checked from its claims file alone
# (probes, no Go). Every testable sentence must be decided: no claim of the
# example may end open or error, and not checkable only where
# not-checkable.txt says so for the provider (a path of Kubernetes' node
# layout on a provider whose node keeps it elsewhere), with the reason it
# names.
#
#   ci/example.sh [provider]     local (default) or kind
set -euo pipefail
cd "$(dirname "$0")/.."
provider=${1:-local}
kp=_output/bin/kubeproof
dir=docs/examples/pod-lifecycle
out=_output/report-example-$provider
"$kp" claims lint "$dir/claims.yaml" --document "$dir/document.md"
"$kp" run --provider "$provider" --claims-file "$dir/claims.yaml" --document "$dir/document.md" \
  --report-dir "$out" --parallel 4 | tee "$out.log"
undecided=$(awk '($1 == "error" || $1 == "open") && $2 ~ /^[0-9]+$/ {n += $2} END {print n + 0}' "$out.log")
if [ "$undecided" != 0 ]; then
  echo "ci/example.sh: $undecided claims of the example were not decided on $provider (see $out/claims.md)" >&2
  exit 1
fi
# Not checkable: exactly the claims listed for the provider, each for its reason.
got=$(jq -r '.documents[].claims[] | select(.verdict == "not-checkable") | .claim.id + "\t" + .reason' "$out/claims.json" | sort)
want=$(awk -v p="$provider" '$1 == p {id = $2; $1 = ""; $2 = ""; sub(/^ +/, ""); print id "\t" $0}' "$dir/not-checkable.txt" | sort)
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
echo "ci/example.sh: every testable sentence decided ($provider), $(printf '%s\n' "$want" | grep -c . || true) not checkable as listed"
