package claims

import (
	"testing"

	"github.com/kubeproof/kubeproof/claims/expect"
	"testing/fstest"
)

// A claim's readings are checked as its own expectations are, and each
// must be one the judge can try: named, saying what it sees, needing less
// than the claim's own reading, not of a timing claim.
func TestReadingsValidate(t *testing.T) {
	const head = "document: {file: d.txt, title: t}\nclaims: [{id: A-B, section: s, quote: q, statement: s, component: c, specs: [x-y], "
	good := "kind: behaviour, requires: [AuditLog], expect: [{evidence: e, equals: 1}], readings: [{name: api, sees: a client's name, expect: [{evidence: f, equals: 1}]}]}]"
	if _, err := Load(fstest.MapFS{"x.yaml": {Data: []byte(head + good)}}); err != nil {
		t.Errorf("a reading the API gives: %v", err)
	}
	for name, body := range map[string]string{
		"no name":          "kind: behaviour, requires: [AuditLog], expect: [{evidence: e, equals: 1}], readings: [{sees: s, expect: [{evidence: f, equals: 1}]}]}]",
		"no sees":          "kind: behaviour, requires: [AuditLog], expect: [{evidence: e, equals: 1}], readings: [{name: api, expect: [{evidence: f, equals: 1}]}]}]",
		"no expectation":   "kind: behaviour, requires: [AuditLog], expect: [{evidence: e, equals: 1}], readings: [{name: api, sees: s}]}]",
		"bad expectation":  "kind: behaviour, requires: [AuditLog], expect: [{evidence: e, equals: 1}], readings: [{name: api, sees: s, expect: [{evidence: f, equals: 1, atLeast: 2}]}]}]",
		"never tried":      "kind: behaviour, requires: [AuditLog], expect: [{evidence: e, equals: 1}], readings: [{name: api, sees: s, requires: [AuditLog], expect: [{evidence: f, equals: 1}]}]}]",
		"needs nothing":    "kind: behaviour, expect: [{evidence: e, equals: 1}], readings: [{name: api, sees: s, expect: [{evidence: f, equals: 1}]}]}]",
		"not a capability": "kind: behaviour, requires: [AuditLog], expect: [{evidence: e, equals: 1}], readings: [{name: api, sees: s, requires: [Telepathy], expect: [{evidence: f, equals: 1}]}]}]",
		"a timing claim":   "kind: timing, claimed: 1 s, requires: [AuditLog], expect: [{evidence: e, atMost: 1}], readings: [{name: api, sees: s, expect: [{evidence: f, atMost: 1}]}]}]",
		"twice the name":   "kind: behaviour, requires: [AuditLog], expect: [{evidence: e, equals: 1}], readings: [{name: api, sees: s, expect: [{evidence: f, equals: 1}]}, {name: api, sees: s, expect: [{evidence: g, equals: 1}]}]}]",
	} {
		if _, err := Load(fstest.MapFS{"x.yaml": {Data: []byte(head + body)}}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// What checks a claim's reads checks each reading's too, with what the
// reading requires.
func TestWithReadings(t *testing.T) {
	c := Claim{ID: "A-B", Requires: nil, Readings: []Reading{{Name: "api", Expect: []expect.Expectation{{Evidence: "f"}}}}}
	c.Requires = append(c.Requires, "AuditLog")
	got := WithReadings([]Claim{c})
	if len(got) != 2 || got[1].ID != "A-B" || len(got[1].Requires) != 0 || got[1].Expect[0].Evidence != "f" || len(got[1].Readings) != 0 {
		t.Errorf("WithReadings = %+v", got)
	}
}
