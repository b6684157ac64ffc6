package judge

import (
	"fmt"
	"strings"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/contract/cluster"
)

// lacks names the first of the capabilities the cluster lacks ("" if it
// has them all, or nothing is known of it).
func lacks(info *cluster.Info, needs []cluster.Capability) cluster.Capability {
	for _, need := range needs {
		if info != nil && !info.Has(need) {
			return need
		}
	}
	return ""
}

// byReading decides a claim whose own reading needs what the cluster
// lacks by the first of its other readings the cluster can give that
// decides it: one whose expectations all hold confirms the sentence; one
// whose expectations do not hold refutes it only if it observes the fact
// at the sentence's strength (claims.Reading.Refutes). A reading that reads
// only a sign of the fact (a field manager or an Event is a client's word
// for what it did, and a client may word it otherwise) refutes nothing:
// the next reading is tried, and with none left the claim stays not
// checkable (own), its reason saying what each reading saw.
func byReading(c claims.Claim, own Result, specs map[string]SpecResult, info *cluster.Info) Result {
	var saw []string
	for _, reading := range c.Readings {
		if lacks(info, reading.Requires) != "" {
			continue
		}
		r := judgeFacts(c.As(reading), specs, info)
		by := fmt.Sprintf("by its reading %s, as the cluster lacks %s (%s): ", reading.Name, lacks(info, c.Requires), reading.Sees)
		switch {
		case r.Verdict == Confirmed || r.Verdict == Error || (r.Verdict == Refuted && reading.Refutes):
			r.Claim, r.Reading = c, reading.Name
			r.Reason = by + r.Reason
			return r
		case r.Verdict == Refuted:
			var seen []string
			for _, o := range failing(r.Observations) {
				seen = append(seen, fmt.Sprintf("%s = %s where the reading wants %s", o.Evidence, show(o.Observed), o.Want))
			}
			saw = append(saw, fmt.Sprintf("its reading %s (%s) did not confirm it, which refutes nothing (it reads a sign of the fact, not the fact): %s", reading.Name, reading.Sees, strings.Join(seen, "; ")))
		}
	}
	if len(saw) > 0 {
		own.Reason += "; " + strings.Join(saw, "; ")
	}
	return own
}
