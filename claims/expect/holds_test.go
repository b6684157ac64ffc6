package expect

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// expectation reads one expectation as a claims file writes it.
func expectation(t *testing.T, text string) Expectation {
	t.Helper()
	var e Expectation
	if err := yaml.UnmarshalStrict([]byte(text), &e); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	if err := e.Validate(); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return e
}

// Negation and absence: each negative operator is the literal negation of
// its positive, and null or absent values (nil) are values like others.
func TestNegationAndAbsence(t *testing.T) {
	obj := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	cases := []struct {
		exp  string
		v    any
		want bool
	}{
		{`{evidence: x, equals: null}`, nil, true},
		{`{evidence: x, equals: null}`, "", false},
		{`{evidence: x, notEquals: null}`, "Running", true},
		{`{evidence: x, notEquals: null}`, nil, false},
		{`{evidence: x, absent: true}`, nil, true},
		{`{evidence: x, absent: true}`, 0.0, false},
		{`{evidence: x, absent: false}`, false, true},
		{`{evidence: x, notMatches: "^Crash"}`, "CrashLoopBackOff", false},
		{`{evidence: x, notMatches: "^Crash"}`, "Running", true},
		{`{evidence: x, notMatches: "^Crash"}`, nil, true},
		{`{evidence: x, notContains: Killing}`, []any{"Scheduled", "Pulled"}, true},
		{`{evidence: x, notContains: Killing}`, []any{"Killing"}, false},
		{`{evidence: x, noneMatches: "^Back"}`, []any{"Scheduled", "BackOff"}, false},
		{`{evidence: x, noneMatches: "^Back"}`, []any{}, true},
		{`{evidence: x, noneMatches: {code: "^4"}}`, []any{obj("code", 201.0), obj("code", 200.0)}, true},
		{`{evidence: x, noneMatches: {code: "^4"}}`, []any{obj("code", 403.0)}, false},
		// An absent or null field is not the text "null".
		{`{evidence: x, anyMatches: {ready: "null"}}`, []any{obj("ready", nil)}, false},
		{`{evidence: x, anyMatches: {ready: "."}}`, []any{obj("name", "a")}, false},
		{`{evidence: x, anyMatches: {ready: null}}`, []any{obj("name", "a")}, true},
		{`{evidence: x, anyMatches: {ready: null}}`, []any{obj("ready", "True")}, false},
	}
	for _, tc := range cases {
		e := expectation(t, tc.exp)
		if got := e.Holds(tc.v); got != tc.want {
			t.Errorf("%s on %v: %t, want %t (%s)", tc.exp, tc.v, got, tc.want, e.Want())
		}
	}
}

// Evidence compared with evidence.
func TestHoldsAgainst(t *testing.T) {
	cases := []struct {
		exp      string
		v, other any
		want     bool
	}{
		{`{evidence: a, before: b}`, 10.0, 20.0, true},
		{`{evidence: a, before: b}`, 20.0, 20.0, false},
		{`{evidence: a, after: b}`, 21.0, 20.0, true},
		{`{evidence: a, after: b}`, 21.0, nil, false},
		{`{evidence: a, sameAs: b}`, "10.0.0.5", "10.0.0.5", true},
		{`{evidence: a, sameAs: b}`, []any{"x"}, []any{"y"}, false},
		{`{evidence: a, sameAs: b, tolerance: 500}`, 1000.0, 1450.0, true},
		{`{evidence: a, sameAs: b, tolerance: 500}`, 1000.0, 1600.0, false},
		{`{evidence: a, notSameAs: b}`, "uid-1", "uid-2", true},
	}
	for _, tc := range cases {
		e := expectation(t, tc.exp)
		if !e.Relative() || e.Other() != "b" {
			t.Errorf("%s: not read as comparing with b", tc.exp)
		}
		if got := e.HoldsAgainst(tc.v, tc.other); got != tc.want {
			t.Errorf("%s on %v, %v: %t, want %t", tc.exp, tc.v, tc.other, got, tc.want)
		}
	}
}

func TestExpectationShapes(t *testing.T) {
	for text, want := range map[string]string{
		`{evidence: a}`:                               "give one of",
		`{evidence: a, before: b, after: c}`:          "not before and after",
		`{evidence: a, tolerance: 5, equals: 1}`:      "tolerance is how far apart",
		`{evidence: a, minus: b, matches: x}`:         "minus b makes the value a difference",
		`{evidence: a, noneMatches: {f: 1}}`:          "field f: the value is a regular expression",
		`{evidence: a, notMatches: "("}`:              "missing closing",
		`{evidence: a, sameAs: "b c"}`:                `"b c" is not an evidence path`,
		`{evidence: a, before: b, says: x, minus: c}`: "hold it with equals",
		`{evidence: a, equals: 1, absent: true}`:      "not equals and absent",
	} {
		var e Expectation
		if err := yaml.UnmarshalStrict([]byte(text), &e); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if err := e.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", text, err, want)
		}
	}
	var e Expectation
	if err := yaml.UnmarshalStrict([]byte(`{evidence: a, equal: 1}`), &e); err == nil || !strings.Contains(err.Error(), `unknown field "equal"`) {
		t.Errorf("an unknown field: %v", err)
	}
}

// A dotted field of anyMatches reaches into the element.
func TestDottedElementFields(t *testing.T) {
	e := expectation(t, `{evidence: x, noneMatches: {body.hash: null}}`)
	list := []any{map[string]any{"body": map[string]any{"hash": "abc"}}, map[string]any{"body": map[string]any{"hash": "def"}}}
	if !e.Holds(list) {
		t.Error("every element has body.hash")
	}
	list = append(list, map[string]any{"body": map[string]any{"hash": nil}})
	if e.Holds(list) {
		t.Error("an element without body.hash")
	}
}
