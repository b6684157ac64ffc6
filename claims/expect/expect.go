// Package expect holds a claim's expectations: conditions on evidence that
// say what the document says (equals, matches, atLeast/atMost, anyMatches,
// ...), which the judge holds against what the cluster did (Holds) and
// names in its reasons (Want), whether a declared evidence type can ever
// meet them (Fits), and a timing claim's number read as a range
// (ParseClaimed, withinClaimed).
package expect

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Expectation is one condition on evidence: what the document says,
// written so that the judge can hold it against what the cluster did.
type Expectation struct {
	// Evidence is the path of an observed value: the evidence name a spec
	// recorded, then fields or list indexes, dot-separated
	// ("stored.nodeName", "binding.0.verb").
	Evidence string `json:"evidence"`
	// Spec, if set, reads the evidence of that spec only.
	Spec string `json:"spec,omitempty"`
	// Says is the document's side in words, for the report.
	Says string `json:"says,omitempty"`

	// Exactly one of the following (AtLeast and AtMost may go together;
	// WithinClaimed stands for both).

	// Equals holds when the evidence is this value.
	Equals *json.RawMessage `json:"equals,omitempty"`
	// NotEquals holds when the evidence is not this value.
	NotEquals *json.RawMessage `json:"notEquals,omitempty"`
	// OneOf holds when the evidence is one of these values.
	OneOf []json.RawMessage `json:"oneOf,omitempty"`
	// Matches holds when the evidence, a string, matches this regular
	// expression.
	Matches string `json:"matches,omitempty"`
	// Contains holds when the evidence, a list, has this element, or, a
	// string, has this substring.
	Contains *json.RawMessage `json:"contains,omitempty"`
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
	// match the element's field (numbers and booleans as JSON writes them).
	AnyMatches *json.RawMessage `json:"anyMatches,omitempty"`
}

func (e Expectation) Validate() error {
	if e.Evidence == "" {
		return errors.New("an expectation names no evidence")
	}
	n := 0
	for _, set := range []bool{e.Equals != nil, e.NotEquals != nil, e.OneOf != nil, e.Matches != "", e.Contains != nil, e.AtLeast != nil || e.AtMost != nil || e.WithinClaimed, e.AnyMatches != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("expectation on %s: give exactly one of equals, notEquals, oneOf, matches, contains, anyMatches, atLeast/atMost, withinClaimed", e.Evidence)
	}
	if e.WithinClaimed && (e.AtLeast != nil || e.AtMost != nil) {
		return fmt.Errorf("expectation on %s: withinClaimed takes its range from claimed: give no atLeast/atMost beside it", e.Evidence)
	}
	if e.Matches != "" {
		if _, err := regexp.Compile(e.Matches); err != nil {
			return fmt.Errorf("expectation on %s: %w", e.Evidence, err)
		}
	}
	if e.AnyMatches != nil {
		if _, err := e.ElementPattern(); err != nil {
			return fmt.Errorf("expectation on %s: %w", e.Evidence, err)
		}
	}
	return nil
}

// ranged says the expectation holds a number to a range.
func (e Expectation) Ranged() bool { return e.AtLeast != nil || e.AtMost != nil || e.WithinClaimed }

// ElementPattern is an anyMatches value, compiled: Whole for a list of
// strings, Fields for a list of objects.
type ElementPattern struct {
	Whole  *regexp.Regexp
	Fields map[string]*regexp.Regexp
}

// ElementPattern compiles the expectation's anyMatches.
func (e Expectation) ElementPattern() (ElementPattern, error) {
	var p ElementPattern
	if e.AnyMatches == nil {
		return p, errors.New("no anyMatches")
	}
	var v any
	if err := json.Unmarshal(*e.AnyMatches, &v); err != nil {
		return p, fmt.Errorf("anyMatches: %w", err)
	}
	switch x := v.(type) {
	case string:
		re, err := regexp.Compile(x)
		if err != nil {
			return p, fmt.Errorf("anyMatches: %w", err)
		}
		p.Whole = re
	case map[string]any:
		if len(x) == 0 {
			return p, errors.New("anyMatches: an object of field -> regular expression names no field")
		}
		p.Fields = map[string]*regexp.Regexp{}
		for field, pat := range x {
			s, ok := pat.(string)
			if !ok {
				return p, fmt.Errorf("anyMatches: field %s: the value is a regular expression, a string, not %s", field, jsonKind(pat))
			}
			re, err := regexp.Compile(s)
			if err != nil {
				return p, fmt.Errorf("anyMatches: field %s: %w", field, err)
			}
			p.Fields[field] = re
		}
	default:
		return p, fmt.Errorf("anyMatches: want a regular expression (a list of strings) or an object of field -> regular expression (a list of objects), not %s", jsonKind(v))
	}
	return p, nil
}

// Match says whether the element el of a list decoded from JSON matches:
// a string the whole pattern, an object every field's pattern (a field's
// value rendered as JSON renders it, strings without their quotes).
func (p ElementPattern) Match(el any) bool {
	if p.Whole != nil {
		s, ok := el.(string)
		return ok && p.Whole.MatchString(s)
	}
	obj, ok := el.(map[string]any)
	if !ok {
		return false
	}
	for field, re := range p.Fields {
		v, ok := obj[field]
		if !ok || !re.MatchString(render(v)) {
			return false
		}
	}
	return true
}

// render is a value as anyMatches matches it.
func render(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Want describes the expectation's condition ("= \"Pending\"", "≥ 1").
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
	case e.Contains != nil:
		return "contains " + string(*e.Contains)
	case e.AnyMatches != nil:
		return anyMatchesWant(e)
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

// anyMatchesWant is anyMatches in words: "an element matching /re/", "an
// element with kind ~ /re/, name ~ /re/" (fields sorted).
func anyMatchesWant(e Expectation) string {
	p, err := e.ElementPattern()
	if err != nil {
		return "anyMatches " + string(*e.AnyMatches)
	}
	if p.Whole != nil {
		return "an element matching /" + p.Whole.String() + "/"
	}
	fields := slices.Sorted(maps.Keys(p.Fields))
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f + " ~ /" + p.Fields[f].String() + "/"
	}
	return "an element with " + strings.Join(parts, ", ")
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Holds reports whether an observed value v (decoded from JSON: float64,
// string, bool, []any, map[string]any) satisfies e. The judge holds
// evidence to claims with it; a probe's wait holds an object's field to
// its condition with it.
func (e Expectation) Holds(v any) bool {
	switch {
	case e.Equals != nil:
		return rawEqual(*e.Equals, v)
	case e.NotEquals != nil:
		return !rawEqual(*e.NotEquals, v)
	case e.OneOf != nil:
		for _, r := range e.OneOf {
			if rawEqual(r, v) {
				return true
			}
		}
		return false
	case e.Matches != "":
		s, ok := v.(string)
		return ok && regexp.MustCompile(e.Matches).MatchString(s)
	case e.Contains != nil:
		var want any
		if json.Unmarshal(*e.Contains, &want) != nil {
			return false
		}
		switch x := v.(type) {
		case string:
			ws, ok := want.(string)
			return ok && strings.Contains(x, ws)
		case []any:
			for _, el := range x {
				if jsonEqual(want, el) {
					return true
				}
			}
		}
		return false
	case e.AnyMatches != nil:
		p, err := e.ElementPattern()
		list, ok := v.([]any)
		return err == nil && ok && slices.ContainsFunc(list, p.Match)
	case e.AtLeast != nil || e.AtMost != nil:
		f, ok := v.(float64)
		if !ok {
			return false
		}
		return (e.AtLeast == nil || f >= *e.AtLeast) && (e.AtMost == nil || f <= *e.AtMost)
	}
	return false
}

// jsonEqual compares two values decoded from JSON.
func jsonEqual(a, b any) bool { return reflect.DeepEqual(a, b) }

// rawEqual compares a JSON value with a decoded Go value.
func rawEqual(raw json.RawMessage, v any) bool {
	var want any
	if err := json.Unmarshal(raw, &want); err != nil {
		return false
	}
	return jsonEqual(want, v)
}
