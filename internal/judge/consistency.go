package judge

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/expect"
)

// Inconsistencies names the pairs of a run's results that read one
// observation two ways: both claims hold the same fact (claims.Facts: the
// same kind of evidence, held to the same expectation), observed the same
// value, which fails both, and yet their verdicts differ, because one takes
// that value as the condition of a conditional verdict and the other does
// not. A pair whose claims name each other in differsFrom is left out; so
// are timing claims, whose verdict is a measurement.
func Inconsistencies(rs []Result, facts *claims.Facts) []string {
	type failure struct {
		r        Result
		path     string
		observed string
		accepts  bool
	}
	byFact := map[string][]failure{}
	var order []string
	for _, r := range rs {
		c := r.Claim
		if c.Kind == claims.Timing || (r.Verdict != Refuted && r.Verdict != Conditional && r.Verdict != NotCheckable) {
			continue
		}
		for i, e := range c.Expect {
			if i >= len(r.Observations) {
				break
			}
			o := r.Observations[i]
			if o.Context || !o.Found || o.Holds || o.Evidence != e.Evidence {
				continue
			}
			k := facts.Of(c, e)
			if _, ok := byFact[k]; !ok {
				order = append(order, k)
			}
			byFact[k] = append(byFact[k], failure{r, e.Evidence, jsonOf(o.Observed), accepts(c, e, o.Observed)})
		}
	}
	var out []string
	seen := map[[2]string]bool{}
	for _, k := range order {
		fs := byFact[k]
		for i := range fs {
			for j := i + 1; j < len(fs); j++ {
				a, b := fs[i], fs[j]
				pair := [2]string{a.r.Claim.ID, b.r.Claim.ID}
				if a.observed != b.observed || a.accepts == b.accepts || a.r.Verdict == b.r.Verdict || seen[pair] || claims.Differs(a.r.Claim, b.r.Claim) {
					continue
				}
				seen[pair] = true
				out = append(out, fmt.Sprintf("%s (%s) and %s (%s) observed the same %s = %s (%s's %s, %s's %s), which fails both, and read it two ways: one fact, one verdict",
					a.r.Claim.ID, a.r.Verdict, b.r.Claim.ID, b.r.Verdict, a.path, a.observed, a.r.Claim.ID, a.path, b.r.Claim.ID, b.path))
			}
		}
	}
	sort.Strings(out)
	return out
}

// accepts reports whether a conditional alternative of c takes v, observed
// for e, as its condition: it does not read e's evidence, or every
// expectation it holds that evidence to holds for v.
func accepts(c claims.Claim, e expect.Expectation, v any) bool {
	for _, alt := range c.Conditional {
		ok := true
		for _, a := range alt.Expect {
			if a.Evidence == e.Evidence && !holds(a, v) {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
