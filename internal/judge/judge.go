package judge

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kubeproof/kubeproof/framework/claims"
	"github.com/kubeproof/kubeproof/framework/cluster"
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
	// Minus is the evidence subtracted from Evidence (Observed is then the
	// difference), with its value.
	Minus      string `json:"minus,omitempty"`
	MinusValue any    `json:"minusValue,omitempty"`
	// Other is the evidence the expectation compares with (sameAs,
	// before...), with its value.
	Other      string `json:"other,omitempty"`
	OtherValue any    `json:"otherValue,omitempty"`
	// Absent says why the evidence has no value at its path although its
	// spec recorded it and ended ("pod.values.phase has 2 elements: none
	// at 3"): the expectation is held to null.
	Absent string `json:"absent,omitempty"`
	// Detail is what the evidence beside a failing value says of it: a
	// step's reason and message beside its failing code.
	Detail string `json:"detail,omitempty"`
}

// String renders the observation for reports.
func (o Observation) String() string {
	if !o.Found {
		return fmt.Sprintf("%s: not observed (want %s)", o.lhs(), o.Want)
	}
	if o.Context {
		return "· " + o.value()
	}
	mark := "✓"
	if !o.Holds {
		mark = "✗"
	}
	s := fmt.Sprintf("%s %s (want %s)", mark, o.value(), o.want())
	if o.Detail != "" {
		s += "; " + o.Detail
	}
	return s
}

// lhs is the evidence the observation holds: a path, or a difference.
func (o Observation) lhs() string {
	if o.Minus != "" {
		return o.Evidence + " − " + o.Minus
	}
	return o.Evidence
}

// value is the evidence and what it was: "pod.last.phase = \"Running\"",
// "a.at − b.at = 1200 (b.at = 300)", "x.3 is absent (...)".
func (o Observation) value() string {
	if o.Absent != "" {
		return o.lhs() + " is absent (" + o.Absent + ")"
	}
	s := o.lhs() + " = " + show(o.Observed)
	if o.Minus != "" {
		s += " (" + o.Minus + " = " + show(o.MinusValue) + ")"
	}
	return s
}

// want is the expectation, with the value of the evidence it compares
// with.
func (o Observation) want() string {
	if o.Other == "" {
		return o.Want
	}
	return o.Want + " = " + show(o.OtherValue)
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
	if d := droppedFields(r, specs); d != "" {
		r.Reason += "; " + d
	}
	return r
}

// droppedFields says which fields of a probe's manifests the API server
// dropped, for a claim its probes decided: a field behind a disabled
// feature gate is dropped, not refused, and the claim may be about the
// object without it.
func droppedFields(r Result, specs map[string]SpecResult) string {
	if len(r.Specs) == 0 || r.Verdict == NotRun {
		return ""
	}
	var parts []string
	for _, ref := range r.Specs {
		steps, ok := specs[ref.ID].Evidence[claims.StepsEvidence].(map[string]any)
		if !ok {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(steps)) {
			step, _ := steps[name].(map[string]any)
			if list, _ := step["dropped"].([]any); len(list) > 0 {
				parts = append(parts, fmt.Sprintf("step %s of %s: %s", name, ref.ID, show(list)))
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "beware: the API server dropped fields of the manifests (as it drops a field behind a disabled feature gate, without refusing the object): " + strings.Join(parts, "; ")
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
	var notUnder []string
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
		// The condition did not hold either: what was seen of it stays in
		// the reason, so that a reader sees why it is no answer.
		r.Observations = append(r.Observations, altObs...)
		if failed := joinObs(altObs, false); failed != "" {
			notUnder = append(notUnder, fmt.Sprintf("nor %s: %s", alt.Condition, failed))
		}
	}
	r.Verdict, r.Reason = Refuted, "the cluster did otherwise: "+joinObs(obs, false)
	if len(notUnder) > 0 {
		r.Reason += "; " + strings.Join(notUnder, "; ")
	}
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
func evaluate(exps []claims.Expectation, specs []SpecResult) ([]Observation, string) {
	var obs []Observation
	missing := ""
	miss := func(path string) {
		if missing == "" {
			missing = path
		}
	}
	for _, e := range exps {
		o := Observation{Evidence: e.Evidence, Says: e.Says, Want: e.Want(), Minus: e.Minus, Other: e.Other()}
		main := find(specs, e.Spec, e.Evidence)
		if !main.recorded {
			miss(e.Evidence)
			obs = append(obs, o)
			continue
		}
		v, absent := main.v, main.absent
		if e.Minus != "" {
			m := find(specs, e.Spec, e.Minus)
			if !m.recorded {
				miss(e.Minus)
				obs = append(obs, o)
				continue
			}
			o.MinusValue = m.v
			a, okA := v.(float64)
			b, okB := m.v.(float64)
			switch {
			case okA && okB:
				v = a - b
			case absent == "":
				absent = firstNonEmpty(m.absent, "a difference needs two numbers")
				v = nil
			}
		}
		o.Found, o.Observed, o.Absent = true, v, absent
		if other := e.Other(); other != "" {
			ov := find(specs, e.Spec, other)
			if !ov.recorded {
				miss(other)
				o.Found = false
				obs = append(obs, o)
				continue
			}
			o.OtherValue = ov.v
			if ov.absent != "" {
				o.Detail = other + " is absent (" + ov.absent + ")"
			}
			o.Holds = e.HoldsAgainst(v, ov.v)
		} else {
			o.Holds = holds(e, v)
		}
		if !o.Holds && o.Detail == "" {
			o.Detail = detail(specs, e)
		}
		obs = append(obs, o)
	}
	return obs, missing
}

// found is a value an evidence path has in a run.
type found struct {
	v any
	// recorded: a spec recorded the evidence and ended (v may then be
	// absent, and absent says why).
	recorded bool
	absent   string
}

// find looks path up in the evidence of specs (only, if set). A path that
// is absent below evidence a spec recorded is absent only if the spec
// ended: one that stopped may not have seen it yet, and is explained as
// missing evidence.
func find(specs []SpecResult, only, path string) found {
	var absent *found
	for _, s := range specs {
		if only != "" && s.ID != only {
			continue
		}
		v, ok, why := claims.Find(s.Evidence, path)
		if ok {
			return found{v: v, recorded: true}
		}
		if why != "" && absent == nil && !s.Failed() {
			absent = &found{recorded: true, absent: why}
		}
	}
	if absent != nil {
		return *absent
	}
	return found{}
}

// detail is what the evidence beside a failing value says of it: for a
// step's code, the step's reason and message, so that a 403 shows who
// refused it and why.
func detail(specs []SpecResult, e claims.Expectation) string {
	parent, field, ok := cutLast(e.Evidence)
	if !ok || field != "code" {
		return ""
	}
	var parts []string
	for _, f := range []string{"reason", "message"} {
		if v := find(specs, e.Spec, parent+"."+f); v.recorded && v.absent == "" {
			if s, ok := v.v.(string); ok && s != "" {
				parts = append(parts, f+": "+strconv.Quote(s))
			}
		}
	}
	return strings.Join(parts, ", ")
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
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
		if o.Holds != holding || o.Context || !o.Found || (holding && seen[o.lhs()]) {
			continue
		}
		seen[o.lhs()] = true
		s := o.value()
		if !holding {
			want := o.want()
			if o.Says != "" {
				want = o.Says + ", i.e. " + want
			}
			s += " where the document says " + want
			if o.Detail != "" {
				s += " (" + o.Detail + ")"
			}
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}
