package report

import (
	"fmt"
	"strings"

	"github.com/kubeproof/kubeproof/claims"
)

// flipsText says under which settings the claim takes another verdict
// than on a default cluster (its flipsUnder), with the fault that makes
// each: "would be confirmed with kube-apiserver --watch-cache=false
// (kubeproof faults --fault watch-cache-off)". Empty when it names none.
func flipsText(c claims.Claim) string {
	var parts []string
	for _, f := range c.FlipsUnder {
		parts = append(parts, fmt.Sprintf("would be %s with %s (kubeproof faults --fault %s)", f.Verdict, f.Setting, f.Fault))
	}
	return strings.Join(parts, "; ")
}
