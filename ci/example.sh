#!/usr/bin/env bash
# The worked example of docs/examples/pod-lifecycle (issue 34): a document
# nobody wrote for kubeproof's own specs, checked from its claims file alone
# (probes, no Go). Every testable sentence must be decided: no claim of the
# example may end not checkable, open or error, on the provider given.
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
undecided=$(awk '($1 == "error" || $1 == "not-checkable" || $1 == "open") && $2 ~ /^[0-9]+$/ {n += $2} END {print n + 0}' "$out.log")
if [ "$undecided" != 0 ]; then
  echo "ci/example.sh: $undecided claims of the example were not decided on $provider (see $out/claims.md)" >&2
  exit 1
fi
echo "ci/example.sh: every testable sentence decided ($provider)"
