package judge

import (
	"fmt"
	"strings"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/expect"
	"github.com/kubeproof/kubeproof/contract/cluster"
)

// Observation is one expectation held against the evidence.
type Observation struct {
	Evidence string `json:"evidence"`
	// Context observations explain a verdict without deciding it.
	Context  bool   `json:"context,omitempty"`
	Says     string `json:"says,omitempty"`
	Want     string `json:"want"`
	Observed any    `json:"observed"`
	Found    bool   `json:"found"`
	Holds    bool   `json:"holds"`
}

// String renders the observation for reports.
func (o Observation) String() string {
	if !o.Found {
		return fmt.Sprintf("%s: not observed (want %s)", o.Evidence, o.Want)
	}
	if o.Context {
		return fmt.Sprintf("· %s = %s", o.Evidence, show(o.Observed))
	}
	mark := "✓"
	if !o.Holds {
		mark = "✗"
	}
	return fmt.Sprintf("%s %s = %s (want %s)", mark, o.Evidence, show(o.Observed), o.Want)
}

// Result is a claim with its verdict and why.
type Result struct {
	Claim        claims.Claim  `json:"claim"`
	Verdict      Verdict       `json:"verdict"`
	Reason       string        `json:"reason"`
	Condition    string        `json:"condition,omitempty"`
	Observations []Observation `json:"observations,omitempty"`
	// Specs are the claim's specs that ran; their evidence is in the
	// report's specs section, once.
	Specs []SpecRef `json:"specs,omitempty"`
	// Measurement is a timing claim's measured value beside the
	// document's number (set when the value was observed).
	Measurement *Measurement `json:"measurement,omitempty"`
}

// Claims gives every claim its verdict from the specs' results on the cluster
// described by info.
func Claims(cs []claims.Claim, specs map[string]SpecResult, info *cluster.Info) []Result {
	out := make([]Result, 0, len(cs))
	for _, c := range cs {
		out = append(out, judge(c, specs, info))
	}
	return out
}

func judge(c claims.Claim, specs map[string]SpecResult, info *cluster.Info) Result {
	// withinClaimed ranges are judged as the atLeast/atMost they stand
	// for; the result keeps the claim as written.
	r := judgeFacts(c.WithClaimedRanges(), specs, info)
	if c.Kind == claims.Timing {
		r = measured(r, specs)
	}
	r.Claim = c
	return r
}

// judgeFacts holds a claim's expectations against the evidence.
func judgeFacts(c claims.Claim, specs map[string]SpecResult, info *cluster.Info) Result {
	r := Result{Claim: c}
	if c.Open != "" {
		r.Verdict, r.Reason = Open, c.Open
		return r
	}
	if !c.Testable() {
		r.Verdict, r.Reason = NotTestable, c.NotTestable
		return r
	}
	var ran []SpecResult
	for _, id := range c.Specs {
		if s, ok := specs[id]; ok {
			ran = append(ran, s)
			r.Specs = append(r.Specs, SpecRef{ID: s.ID, State: s.State, Message: s.Message, Seconds: s.Seconds})
		}
	}
	for _, capability := range c.Requires {
		if info != nil && !info.Has(capability) {
			r.Verdict, r.Reason = NotCheckable, info.Missing(capability)
			return r
		}
	}
	if len(ran) == 0 {
		r.Verdict, r.Reason = NotRun, "none of its specs ran in this run ("+strings.Join(c.Specs, ", ")+")"
		return r
	}
	allSkipped := true
	for _, s := range ran {
		allSkipped = allSkipped && s.skipped()
	}
	if allSkipped {
		r.Verdict, r.Reason = NotCheckable, "skipped: "+ran[0].Message
		return r
	}

	obs, missing := evaluate(c.Expect, ran)
	r.Observations = append(obs, explain(c.Context, ran)...)
	if len(failing(obs)) == 0 {
		if missing != "" {
			r.Verdict, r.Reason = missingVerdict(c, missing, ran, specs)
			return r
		}
		r.Verdict, r.Reason = Confirmed, "observed "+joinObs(obs, true)
		return r
	}
	// What was observed contradicts the claim (even if a spec stopped
	// before it observed the rest). Does it hold under a condition?
	for _, alt := range c.Conditional {
		altObs, altMissing := evaluate(alt.Expect, ran)
		switch {
		case altMissing == "" && allHold(altObs):
			r.Verdict, r.Condition = Conditional, alt.Condition
			r.Reason = fmt.Sprintf("holds only %s: %s; in general %s", alt.Condition, joinObs(altObs, true), joinObs(obs, false))
			r.Observations = append(r.Observations, altObs...)
			return r
		case altMissing != "" && len(failing(altObs)) == 0:
			// The condition could be the answer, but it was not observed:
			// the claim cannot be called refuted.
			v, why := missingVerdict(c, altMissing, ran, specs)
			if v == Error {
				r.Verdict, r.Reason = Error, why
				return r
			}
			r.Verdict = NotCheckable
			r.Reason = fmt.Sprintf("in general %s; whether it holds %s was not observed: %s", joinObs(obs, false), alt.Condition, why)
			return r
		}
	}
	r.Verdict, r.Reason = Refuted, "the cluster did otherwise: "+joinObs(obs, false)
	return r
}

// missingVerdict explains evidence no spec recorded: its spec did not run
// in this run, skipped, stopped on an unmet precondition, or failed.
func missingVerdict(c claims.Claim, missing string, ran []SpecResult, specs map[string]SpecResult) (Verdict, string) {
	if absent := notRan(c.Specs, specs); len(absent) > 0 {
		return NotRun, fmt.Sprintf("evidence %s comes from spec %s, which did not run in this run", missing, strings.Join(absent, ", "))
	}
	return missingEvidence(missing, ran)
}

// failing returns the observations that were made and contradict the claim.
func failing(obs []Observation) []Observation {
	var out []Observation
	for _, o := range obs {
		if o.Found && !o.Holds {
			out = append(out, o)
		}
	}
	return out
}

// evaluate holds expectations against the specs' evidence. missing names
// the first evidence no spec recorded.
func evaluate(exps []expect.Expectation, specs []SpecResult) ([]Observation, string) {
	var obs []Observation
	missing := ""
	for _, e := range exps {
		o := Observation{Evidence: e.Evidence, Says: e.Says, Want: e.Want()}
		for _, s := range specs {
			if e.Spec != "" && s.ID != e.Spec {
				continue
			}
			if v, ok := lookup(s.Evidence, e.Evidence); ok {
				o.Observed, o.Found, o.Holds = v, true, holds(e, v)
				break
			}
		}
		if !o.Found && missing == "" {
			missing = e.Evidence
		}
		obs = append(obs, o)
	}
	return obs, missing
}

// notRan lists the named specs that have no result.
func notRan(ids []string, specs map[string]SpecResult) []string {
	var out []string
	for _, id := range ids {
		if _, ok := specs[id]; !ok {
			out = append(out, id)
		}
	}
	return out
}

// explain reads the evidence a claim shows for explanation only.
func explain(paths []string, specs []SpecResult) []Observation {
	var obs []Observation
	for _, p := range paths {
		o := Observation{Evidence: p, Context: true, Want: "(context)", Holds: true}
		for _, s := range specs {
			if v, ok := lookup(s.Evidence, p); ok {
				o.Observed, o.Found = v, true
				break
			}
		}
		if o.Found {
			obs = append(obs, o)
		}
	}
	return obs
}

// missingEvidence explains evidence no spec recorded: a spec that skipped
// (the cluster cannot do what it needs), failed (a harness bug), stopped
// because something the claim depends on did not happen, or a harness bug.
func missingEvidence(evidence string, specs []SpecResult) (Verdict, string) {
	name, _, _ := strings.Cut(evidence, ".")
	for _, s := range specs {
		if why, ok := s.Unobservable[name]; ok {
			return NotCheckable, fmt.Sprintf("not checkable here: spec %s could not observe %s: %s", s.ID, name, why)
		}
	}
	for _, s := range specs {
		if s.skipped() {
			return NotCheckable, fmt.Sprintf("spec %s, which observes %s, skipped: %s", s.ID, evidence, s.Message)
		}
	}
	for _, s := range specs {
		if _, unmet := s.Precondition(); s.Failed() && !unmet {
			return Error, fmt.Sprintf("spec %s %s before it observed %s: %s", s.ID, s.State, evidence, s.Message)
		}
	}
	for _, s := range specs {
		if what, unmet := s.Precondition(); s.Failed() && unmet {
			return NotCheckable, fmt.Sprintf("not checkable here, because %s (spec %s stopped before it observed %s)", what, s.ID, evidence)
		}
	}
	// A summary of samples (framework.Samples) has no median when nothing
	// was sampled: the spec looked, and there was nothing to measure.
	if parent, _, ok := cutLast(evidence); ok {
		for _, s := range specs {
			if n, ok := lookup(s.Evidence, parent+".n"); ok && fmt.Sprint(n) == "0" {
				return NotCheckable, fmt.Sprintf("not checkable here: spec %s took no samples of %s (%s.n = 0)", s.ID, parent, parent)
			}
		}
	}
	return Error, fmt.Sprintf("no spec recorded the evidence %s (a harness bug)", evidence)
}

func allHold(obs []Observation) bool {
	for _, o := range obs {
		if !o.Holds {
			return false
		}
	}
	return true
}

// joinObs renders the observations that hold (or those that do not).
func joinObs(obs []Observation, holding bool) string {
	var parts []string
	seen := map[string]bool{}
	for _, o := range obs {
		if o.Holds != holding || o.Context || !o.Found || (holding && seen[o.Evidence]) {
			continue
		}
		seen[o.Evidence] = true
		s := fmt.Sprintf("%s = %s", o.Evidence, show(o.Observed))
		if !holding {
			want := o.Want
			if o.Says != "" {
				want = o.Says + ", i.e. " + o.Want
			}
			s += " where the document says " + want
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}
