package judge

import (
	"fmt"
	"strings"
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
