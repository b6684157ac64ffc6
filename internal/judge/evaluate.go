package judge

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/claims/expect"
)

// evaluate holds expectations against the specs' evidence. missing names
// the first evidence no spec recorded.
func evaluate(exps []expect.Expectation, specs []SpecResult) ([]Observation, string) {
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
				absent = cmp.Or(m.absent, "a difference needs two numbers")
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
		v, ok, why := evidence.Find(s.Evidence, path)
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
func detail(specs []SpecResult, e expect.Expectation) string {
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
