// Package expect holds a claim's expectations: conditions on evidence that
// say what the document says (equals, matches, atLeast/atMost, anyMatches,
// ...), which the judge holds against what the cluster did (Holds) and
// names in its reasons (Want), whether a declared evidence type can ever
// meet them (Fits), and a timing claim's number read as a range
// (ParseClaimed, withinClaimed).
package expect

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Expectation is one condition on evidence: what the document says,
// written so that the judge can hold it against what the cluster did. Its
// right side is a constant (equals: Running), or another piece of evidence
// (before: steps.delete.at), so that two observations are compared with
// each other rather than each with a number written by hand.
type Expectation struct {
	// Evidence is the path of an observed value: the evidence name a spec
	// recorded, then fields or list indexes, dot-separated
	// ("stored.nodeName", "binding.0.verb"); a last part # is the length of
	// the list (or object, or string) before it ("pod.values.phase.#").
	Evidence string `json:"evidence"`
	// Spec, if set, reads the evidence of that spec only.
	Spec string `json:"spec,omitempty"`
	// Says is the document's side in words, for the report.
	Says string `json:"says,omitempty"`
	// Minus names a second evidence path, a number: the value the operator
	// holds is the evidence minus that one, the time between two events
	// ({evidence: pod.changes.ready.1.at, minus: steps.create.at, atMost:
	// 5000}). It goes with equals, notEquals, atLeast/atMost and
	// withinClaimed.
	Minus string `json:"minus,omitempty"`

	// Exactly one of the following (AtLeast and AtMost may go together;
	// WithinClaimed stands for both; Tolerance goes with SameAs).

	// Equals holds when the evidence is this value (null: the value is
	// null or absent).
	Equals *json.RawMessage `json:"equals,omitempty"`
	// NotEquals holds when the evidence is not this value.
	NotEquals *json.RawMessage `json:"notEquals,omitempty"`
	// OneOf holds when the evidence is one of these values.
	OneOf []json.RawMessage `json:"oneOf,omitempty"`
	// Matches holds when the evidence, a string, matches this regular
	// expression.
	Matches string `json:"matches,omitempty"`
	// NotMatches holds exactly when matches would not: the evidence is not
	// a string that matches this regular expression (null and absent
	// values hold).
	NotMatches string `json:"notMatches,omitempty"`
	// Contains holds when the evidence, a list, has this element, or, a
	// string, has this substring.
	Contains *json.RawMessage `json:"contains,omitempty"`
	// NotContains holds exactly when contains would not.
	NotContains *json.RawMessage `json:"notContains,omitempty"`
	// AtLeast holds when the evidence, a number, is this or more.
	AtLeast *float64 `json:"atLeast,omitempty"`
	// AtMost holds when the evidence, a number, is this or less.
	AtMost *float64 `json:"atMost,omitempty"`
	// WithinClaimed holds when the evidence, a number of milliseconds, is
	// in the range the claim's claimed number is taken as (ParseClaimed: a
	// range as written, a bound as that bound, a single number n as
	// [n/2, 1.5n]), instead of an atLeast/atMost written by hand.
	WithinClaimed bool `json:"withinClaimed,omitempty"`
	// AnyMatches holds when the evidence, a list, has an element that
	// matches: for a list of strings a regular expression; for a list of
	// objects an object of field -> regular expression, all of which must
	// match the element's field (numbers and booleans as JSON writes them;
	// a null or absent field matches no expression, only null; a dotted
	// field reaches into the element: body.hash).
	AnyMatches *json.RawMessage `json:"anyMatches,omitempty"`
	// NoneMatches holds when the evidence, a list, has no element that
	// anyMatches would take (an empty list holds).
	NoneMatches *json.RawMessage `json:"noneMatches,omitempty"`
	// Absent holds, when true, if the evidence is null or has no value
	// (a field a JSONPath found nothing at, a list element past its end);
	// when false, if it has a value other than null.
	Absent *bool `json:"absent,omitempty"`
	// SameAs holds when the evidence equals the value at this other
	// evidence path (two values read in two places); with Tolerance, when
	// both are numbers at most Tolerance apart ("at the same time").
	SameAs string `json:"sameAs,omitempty"`
	// Tolerance is how far apart two numbers SameAs still takes as the
	// same (milliseconds, for times).
	Tolerance *float64 `json:"tolerance,omitempty"`
	// NotSameAs holds when the evidence differs from the value at this
	// other evidence path.
	NotSameAs string `json:"notSameAs,omitempty"`
	// Before holds when the evidence, a number (a time), is less than the
	// one at this other evidence path: it happened first.
	Before string `json:"before,omitempty"`
	// After holds when the evidence, a number (a time), is greater than
	// the one at this other evidence path.
	After string `json:"after,omitempty"`
}

// UnmarshalJSON reads an expectation as the loader reads every field
// (unknown fields refused), and keeps an operator written as null
// (equals: null) as the JSON value null rather than as no operator.
func (e *Expectation) UnmarshalJSON(data []byte) error {
	type plain Expectation
	var p plain
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return err
	}
	null := json.RawMessage("null")
	for key, target := range map[string]**json.RawMessage{"equals": &p.Equals, "notEquals": &p.NotEquals, "contains": &p.Contains, "notContains": &p.NotContains} {
		if raw, ok := fields[key]; ok && bytes.Equal(bytes.TrimSpace(raw), null) {
			v := slices.Clone(null)
			*target = &v
		}
	}
	*e = Expectation(p)
	return nil
}

// operators names the operators the expectation sets (atLeast and atMost
// count as one, as withinClaimed does with them).
func (e Expectation) operators() []string {
	var out []string
	for _, op := range []struct {
		name string
		set  bool
	}{
		{"equals", e.Equals != nil}, {"notEquals", e.NotEquals != nil}, {"oneOf", e.OneOf != nil},
		{"matches", e.Matches != ""}, {"notMatches", e.NotMatches != ""},
		{"contains", e.Contains != nil}, {"notContains", e.NotContains != nil},
		{"atLeast/atMost", e.AtLeast != nil || e.AtMost != nil || e.WithinClaimed},
		{"anyMatches", e.AnyMatches != nil}, {"noneMatches", e.NoneMatches != nil}, {"absent", e.Absent != nil},
		{"sameAs", e.SameAs != ""}, {"notSameAs", e.NotSameAs != ""}, {"before", e.Before != ""}, {"after", e.After != ""},
	} {
		if op.set {
			out = append(out, op.name)
		}
	}
	return out
}

// operatorNames lists every operator, for the message that asks for one.
const operatorNames = "equals, notEquals, oneOf, matches, notMatches, contains, notContains, anyMatches, noneMatches, atLeast/atMost, withinClaimed, absent, sameAs, notSameAs, before, after"

// Other is the evidence path the expectation compares the evidence with
// (sameAs, notSameAs, before, after), or "".
func (e Expectation) Other() string { return cmp.Or(e.SameAs, e.NotSameAs, e.Before, e.After) }

// Relative reports whether the expectation reads evidence beside its own
// (an operator whose right side is a path, or minus): a wait's condition,
// which holds one field, cannot be one.
func (e Expectation) Relative() bool { return e.Other() != "" || e.Minus != "" }

func (e Expectation) Validate() error {
	if e.Evidence == "" {
		return errors.New("an expectation names no evidence")
	}
	if ops := e.operators(); len(ops) != 1 {
		if len(ops) == 0 {
			return fmt.Errorf("expectation on %s: give one of %s", e.Evidence, operatorNames)
		}
		return fmt.Errorf("expectation on %s: give exactly one of %s, not %s", e.Evidence, operatorNames, strings.Join(ops, " and "))
	}
	if e.WithinClaimed && (e.AtLeast != nil || e.AtMost != nil) {
		return fmt.Errorf("expectation on %s: withinClaimed takes its range from claimed: give no atLeast/atMost beside it", e.Evidence)
	}
	if e.Tolerance != nil && (e.SameAs == "" || *e.Tolerance < 0) {
		return fmt.Errorf("expectation on %s: tolerance is how far apart two numbers sameAs takes as the same: a number ≥ 0 beside sameAs", e.Evidence)
	}
	if e.Minus != "" && e.Equals == nil && e.NotEquals == nil && !e.Ranged() {
		return fmt.Errorf("expectation on %s: minus %s makes the value a difference of two numbers: hold it with equals, notEquals, atLeast/atMost or withinClaimed", e.Evidence, e.Minus)
	}
	for _, p := range []string{e.Minus, e.Other()} {
		if p != "" && (strings.ContainsAny(p, " \t") || strings.HasPrefix(p, ".") || strings.HasSuffix(p, ".")) {
			return fmt.Errorf("expectation on %s: %q is not an evidence path (name.field.0)", e.Evidence, p)
		}
	}
	for _, re := range []string{e.Matches, e.NotMatches} {
		if re != "" {
			if _, err := regexp.Compile(re); err != nil {
				return fmt.Errorf("expectation on %s: %w", e.Evidence, err)
			}
		}
	}
	if e.AnyMatches != nil || e.NoneMatches != nil {
		if _, err := e.ElementPattern(); err != nil {
			return fmt.Errorf("expectation on %s: %w", e.Evidence, err)
		}
	}
	return nil
}

// Ranged says the expectation holds a number to a range.
func (e Expectation) Ranged() bool { return e.AtLeast != nil || e.AtMost != nil || e.WithinClaimed }

// Want describes the expectation's condition ("= \"Pending\"", "≥ 1",
// "before steps.delete.at").
func (e Expectation) Want() string {
	switch {
	case e.Equals != nil:
		return "= " + string(*e.Equals)
	case e.NotEquals != nil:
		return "≠ " + string(*e.NotEquals)
	case e.OneOf != nil:
		parts := make([]string, len(e.OneOf))
		for i, r := range e.OneOf {
			parts[i] = string(r)
		}
		return "one of " + strings.Join(parts, ", ")
	case e.Matches != "":
		return "matches /" + e.Matches + "/"
	case e.NotMatches != "":
		return "does not match /" + e.NotMatches + "/"
	case e.Contains != nil:
		return "contains " + string(*e.Contains)
	case e.NotContains != nil:
		return "does not contain " + string(*e.NotContains)
	case e.AnyMatches != nil:
		return elementWant(e, "an element")
	case e.NoneMatches != nil:
		return elementWant(e, "no element")
	case e.Absent != nil && *e.Absent:
		return "absent or null"
	case e.Absent != nil:
		return "present (not null)"
	case e.SameAs != "" && e.Tolerance != nil:
		return fmt.Sprintf("within %s of %s", num(*e.Tolerance), e.SameAs)
	case e.SameAs != "":
		return "the same as " + e.SameAs
	case e.NotSameAs != "":
		return "not the same as " + e.NotSameAs
	case e.Before != "":
		return "before (less than) " + e.Before
	case e.After != "":
		return "after (greater than) " + e.After
	case e.WithinClaimed && e.AtLeast == nil && e.AtMost == nil:
		return "within the claimed range"
	case e.AtLeast != nil && e.AtMost != nil:
		return fmt.Sprintf("between %s and %s", num(*e.AtLeast), num(*e.AtMost))
	case e.AtLeast != nil:
		return "≥ " + num(*e.AtLeast)
	case e.AtMost != nil:
		return "≤ " + num(*e.AtMost)
	}
	return "?"
}

// elementWant is anyMatches or noneMatches in words: "an element matching
// /re/", "no element with kind ~ /re/, name = null" (fields sorted).
func elementWant(e Expectation, which string) string {
	p, err := e.ElementPattern()
	if err != nil {
		raw, op := e.elementRaw()
		return op + " " + string(raw)
	}
	if p.Whole != nil {
		return which + " matching /" + p.Whole.String() + "/"
	}
	fields := slices.Sorted(maps.Keys(p.Fields))
	parts := make([]string, len(fields))
	for i, f := range fields {
		if p.Fields[f] == nil {
			parts[i] = f + " null or absent"
			continue
		}
		parts[i] = f + " ~ /" + p.Fields[f].String() + "/"
	}
	return which + " with " + strings.Join(parts, ", ")
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
