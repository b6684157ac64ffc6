package claims

import (
	"fmt"
	"slices"

	"github.com/kubeproof/kubeproof/claims/expect"
	"github.com/kubeproof/kubeproof/contract/cluster"
)

// Reading is another way to decide a claim, from other evidence: where the
// claim's own needs a capability the cluster lacks (the audit log, etcd,
// the nodes) and the API shows the same thing (who wrote an object, in a
// field manager; what a controller reported, in an Event; the order the
// API server stored changes in, in a watch). The judge tries a claim's
// readings in order when its own cannot be had: the first the cluster can
// give whose expectations all hold confirms the claim, and the report
// names it. A reading that does not hold refutes the claim only where it
// says it observes the sentence's fact itself (Refutes): otherwise what it
// reads is a sign of what the sentence says (a client names itself), whose
// absence does not show the sentence false, and the claim stays not
// checkable, saying what the reading saw.
//
// A reading must be as strong as the sentence: a field manager named
// kube-controller-manager shows which client wrote, not which user the API
// server authenticated, and a reading that cannot see part of what the
// sentence says (a request's verb, the Binding subresource) is not given
// to the claim at all. Sees says what it shows and what it does not.
type Reading struct {
	// Name names the reading in the reports (api: an object's field
	// managers and Events).
	Name string `json:"name"`
	// Requires are the capabilities the reading needs; none: the API
	// alone. They are fewer than the claim's own.
	Requires []cluster.Capability `json:"requires,omitempty"`
	// Expect are the reading's conditions on evidence: all must hold for
	// confirmed.
	Expect []expect.Expectation `json:"expect"`
	// Sees says what the reading shows, and what of the claim's own reading
	// it cannot (a client's name, not the user authenticated): the reports
	// give it with the verdict.
	Sees string `json:"sees"`
	// Refutes says the reading observes the sentence's fact itself, at the
	// sentence's strength (the objects the API holds and their own
	// timestamps, a field manager the component cannot word otherwise), so
	// that expectations which do not hold refute the claim. Without it the
	// reading reads a sign of the fact whose absence shows nothing false
	// (an Event's wording, a client's name that another distribution gives
	// otherwise): it can confirm, never refute.
	Refutes bool `json:"refutes,omitempty"`
}

// As is the claim as reading r reads it: r's requires and expectations
// instead of its own, without conditional alternatives or other readings.
func (c Claim) As(r Reading) Claim {
	c.Requires, c.Expect, c.Conditional, c.Readings = r.Requires, r.Expect, nil, nil
	return c
}

// validateReadings says what is wrong with the claim's readings.
func (c Claim) validateReadings() []string {
	var bad []string
	names := map[string]bool{}
	for i, r := range c.Readings {
		what := fmt.Sprintf("reading %d (%s)", i+1, r.Name)
		switch {
		case r.Name == "" || names[r.Name]:
			bad = append(bad, what+": needs a name of its own")
		case r.Sees == "":
			bad = append(bad, what+": says what it sees (sees:), and what of the claim's own reading it cannot")
		case len(r.Expect) == 0:
			bad = append(bad, what+": has no expectations")
		case c.Kind == Timing:
			bad = append(bad, what+": a timing claim is a measurement of its own evidence, read no other way")
		}
		names[r.Name] = true
		for _, need := range r.Requires {
			if !slices.Contains(cluster.Capabilities, need) {
				bad = append(bad, fmt.Sprintf("%s: requires %q, which is not a capability (%v)", what, need, cluster.Capabilities))
			}
		}
		// Tried only where the claim's own cannot be had, a reading that
		// needs all the claim needs would never be.
		if !slices.ContainsFunc(c.Requires, func(need cluster.Capability) bool { return !slices.Contains(r.Requires, need) }) {
			bad = append(bad, what+": needs every capability the claim's own reading needs, so it is never tried")
		}
		for _, e := range r.Expect {
			if err := e.Validate(); err != nil {
				bad = append(bad, fmt.Sprintf("%s: %v", what, err))
			}
		}
	}
	return bad
}

// WithReadings lists each claim, then each of its readings as the claim
// reads it (As): the checks of what claims read (evidence paths, the
// capabilities a probe's observer needs) hold for every reading.
func WithReadings(cs []Claim) []Claim {
	var out []Claim
	for _, c := range cs {
		out = append(out, c)
		for _, r := range c.Readings {
			out = append(out, c.As(r))
		}
	}
	return out
}
