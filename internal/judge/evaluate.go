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
// is absent below evidence a spec recorded (a field the recorded object
// left out, a list element past the end, a path through a null) reads as
// absent, null, only if the spec ended: one that stopped may not have seen
// it yet, and is explained as missing evidence. So is a summary of samples
// that took none (framework.Samples has no median without values): the
// spec looked and there was nothing to measure, which decides nothing.
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
		if why == "" || absent != nil || s.Failed() || noSamples(s, path) {
			continue
		}
		if _, unwritten := alwaysWritten(s, path); !unwritten {
			absent = &found{recorded: true, absent: why}
		}
	}
	if absent != nil {
		return *absent
	}
	return found{}
}

// noSamples says whether path is a field beside a summary's n = 0 in the
// evidence of s: a median, min or max of no samples.
func noSamples(s SpecResult, path string) bool {
	parent, _, ok := cutLast(path)
	if !ok {
		return false
	}
	n, ok := lookup(s.Evidence, parent+".n")
	return ok && fmt.Sprint(n) == "0"
}

// alwaysWritten names the field of path that s's evidence lacks when the
// spec's declared type writes it always (no omitempty): that spec did not
// write it (a report of a kubeproof whose spec had no such field, or a
// harness bug), which is no absence. Evidence of no declared type (a test's)
// reads as if every field may be left out.
func alwaysWritten(s SpecResult, path string) (string, bool) {
	parts := strings.Split(path, ".")
	t, ok := s.Types[parts[0]]
	if !ok {
		return "", false
	}
	for i := 1; i < len(parts); i++ {
		at := strings.Join(parts[:i+1], ".")
		if _, ok := lookup(s.Evidence, at); ok {
			continue
		}
		parent, ok := lookup(s.Evidence, strings.Join(parts[:i], "."))
		m, isObject := parent.(map[string]any)
		if !ok || !isObject || parts[i] == "#" || parts[i] == "{key}" {
			return "", false
		}
		if _, has := m[parts[i]]; has {
			return "", false
		}
		if omittable, known := evidence.Omittable(t, at); known && !omittable {
			return at, true
		}
		return "", false
	}
	return "", false
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
// because something the claim depends on did not happen, sampled nothing,
// or a harness bug. A field missing below evidence a spec that ended
// recorded is no such case (find reads it as absent), unless the spec's
// type always writes it.
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
	for _, s := range specs {
		if field, ok := alwaysWritten(s, evidence); ok {
			return Error, fmt.Sprintf("spec %s recorded %s without %s, a field it always writes: a report of another kubeproof version, or a harness bug", s.ID, name, field)
		}
	}
	// A summary of samples (framework.Samples) has no median when nothing
	// was sampled: the spec looked, and there was nothing to measure.
	for _, s := range specs {
		if noSamples(s, evidence) {
			parent, _, _ := cutLast(evidence)
			return NotCheckable, fmt.Sprintf("not checkable here: spec %s took no samples of %s (%s.n = 0)", s.ID, parent, parent)
		}
	}
	return Error, fmt.Sprintf("no spec recorded the evidence %s (a harness bug)", evidence)
}
