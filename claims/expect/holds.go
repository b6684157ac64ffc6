package expect

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/claims/evidence"
)

// Holds reports whether an observed value v (decoded from JSON: float64,
// string, bool, []any, map[string]any; nil for null or absent) satisfies
// e. The judge holds evidence to claims with it; a probe's wait holds an
// object's field to its condition with it. An operator whose right side is
// other evidence is held by HoldsAgainst.
func (e Expectation) Holds(v any) bool {
	switch {
	case e.Equals != nil:
		return rawEqual(*e.Equals, v)
	case e.NotEquals != nil:
		return !rawEqual(*e.NotEquals, v)
	case e.OneOf != nil:
		return slices.ContainsFunc(e.OneOf, func(r json.RawMessage) bool { return rawEqual(r, v) })
	case e.Matches != "":
		s, ok := v.(string)
		return ok && regexp.MustCompile(e.Matches).MatchString(s)
	case e.NotMatches != "":
		s, ok := v.(string)
		return !ok || !regexp.MustCompile(e.NotMatches).MatchString(s)
	case e.Contains != nil:
		return contains(*e.Contains, v)
	case e.NotContains != nil:
		return !contains(*e.NotContains, v)
	case e.AnyMatches != nil, e.NoneMatches != nil:
		p, err := e.ElementPattern()
		list, ok := v.([]any)
		if err != nil {
			return false
		}
		if e.NoneMatches != nil {
			return v == nil || (ok && !slices.ContainsFunc(list, p.Match))
		}
		return ok && slices.ContainsFunc(list, p.Match)
	case e.Absent != nil:
		return (v == nil) == *e.Absent
	case e.AtLeast != nil || e.AtMost != nil:
		f, ok := v.(float64)
		if !ok {
			return false
		}
		return (e.AtLeast == nil || f >= *e.AtLeast) && (e.AtMost == nil || f <= *e.AtMost)
	}
	return false
}

// HoldsAgainst reports whether v satisfies an operator whose right side is
// other evidence (sameAs, notSameAs, before, after), other being the value
// at that path.
func (e Expectation) HoldsAgainst(v, other any) bool {
	switch {
	case e.SameAs != "" && e.Tolerance != nil:
		a, okA := v.(float64)
		b, okB := other.(float64)
		return okA && okB && math.Abs(a-b) <= *e.Tolerance
	case e.SameAs != "":
		return jsonEqual(v, other)
	case e.NotSameAs != "":
		return !jsonEqual(v, other)
	case e.Before != "", e.After != "":
		a, okA := v.(float64)
		b, okB := other.(float64)
		if !okA || !okB {
			return false
		}
		if e.Before != "" {
			return a < b
		}
		return a > b
	}
	return false
}

// contains says whether v, a list, has the element raw, or, a string, the
// substring raw.
func contains(raw json.RawMessage, v any) bool {
	var want any
	if json.Unmarshal(raw, &want) != nil {
		return false
	}
	switch x := v.(type) {
	case string:
		ws, ok := want.(string)
		return ok && strings.Contains(x, ws)
	case []any:
		return slices.ContainsFunc(x, func(el any) bool { return jsonEqual(want, el) })
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

// ElementPattern is an anyMatches (or noneMatches) value, compiled: Whole
// for a list of strings, Fields for a list of objects (a nil expression
// stands for null: the field is null or absent).
type ElementPattern struct {
	Whole  *regexp.Regexp
	Fields map[string]*regexp.Regexp
}

// elementRaw is the expectation's anyMatches or noneMatches, and its name.
func (e Expectation) elementRaw() (json.RawMessage, string) {
	if e.NoneMatches != nil {
		return *e.NoneMatches, "noneMatches"
	}
	if e.AnyMatches != nil {
		return *e.AnyMatches, "anyMatches"
	}
	return nil, ""
}

// ElementPattern compiles the expectation's anyMatches or noneMatches.
func (e Expectation) ElementPattern() (ElementPattern, error) {
	var p ElementPattern
	raw, op := e.elementRaw()
	if raw == nil {
		return p, errors.New("no anyMatches or noneMatches")
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return p, fmt.Errorf("%s: %w", op, err)
	}
	switch x := v.(type) {
	case string:
		re, err := regexp.Compile(x)
		if err != nil {
			return p, fmt.Errorf("%s: %w", op, err)
		}
		p.Whole = re
	case map[string]any:
		if len(x) == 0 {
			return p, fmt.Errorf("%s: an object of field -> regular expression names no field", op)
		}
		p.Fields = map[string]*regexp.Regexp{}
		for field, pat := range x {
			if pat == nil {
				p.Fields[field] = nil
				continue
			}
			s, ok := pat.(string)
			if !ok {
				return p, fmt.Errorf("%s: field %s: the value is a regular expression, a string (or null for a null or absent field), not %s", op, field, evidence.KindOf(pat))
			}
			re, err := regexp.Compile(s)
			if err != nil {
				return p, fmt.Errorf("%s: field %s: %w", op, field, err)
			}
			p.Fields[field] = re
		}
	default:
		return p, fmt.Errorf("%s: want a regular expression (a list of strings) or an object of field -> regular expression (a list of objects), not %s", op, evidence.KindOf(v))
	}
	return p, nil
}

// Match says whether the element el of a list decoded from JSON matches:
// a string the whole pattern, an object every field's pattern (a field's
// value rendered as JSON renders it, strings without their quotes). A null
// or absent field matches only null, never an expression: rendered, it
// would be the text "null".
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
		// A dotted field reaches into the element (body.hash).
		v, _, _ := evidence.Find(map[string]any{"el": obj}, "el."+field)
		if re == nil {
			if v != nil {
				return false
			}
			continue
		}
		if v == nil || !re.MatchString(render(v)) {
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
