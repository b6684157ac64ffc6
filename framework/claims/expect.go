package claims

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
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

	// Exactly one of the following (AtLeast and AtMost may go together).

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
}

func (e Expectation) validate() error {
	if e.Evidence == "" {
		return errors.New("an expectation names no evidence")
	}
	n := 0
	for _, set := range []bool{e.Equals != nil, e.NotEquals != nil, e.OneOf != nil, e.Matches != "", e.Contains != nil, e.AtLeast != nil || e.AtMost != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("expectation on %s: give exactly one of equals, notEquals, oneOf, matches, contains, atLeast/atMost", e.Evidence)
	}
	if e.Matches != "" {
		if _, err := regexp.Compile(e.Matches); err != nil {
			return fmt.Errorf("expectation on %s: %w", e.Evidence, err)
		}
	}
	return nil
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
	case e.AtLeast != nil && e.AtMost != nil:
		return fmt.Sprintf("between %s and %s", num(*e.AtLeast), num(*e.AtMost))
	case e.AtLeast != nil:
		return "≥ " + num(*e.AtLeast)
	case e.AtMost != nil:
		return "≤ " + num(*e.AtMost)
	}
	return "?"
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
