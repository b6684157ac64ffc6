package claims

import (
	"encoding/json"
	"errors"
	"fmt"
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
