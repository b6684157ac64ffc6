package claims

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kubeproof/kubeproof/claims/evidence"
)

func rules(t *testing.T) *Catalog { return testCatalog(t, "rules.yaml") }

type boundEv struct {
	Bound bool `json:"bound"`
}

type runningEv struct {
	Running bool `json:"running"`
}

type who struct {
	Username string   `json:"username"`
	Groups   []string `json:"groups"`
}

func decls(pairs ...any) []evidence.EvidenceDecl {
	var out []evidence.EvidenceDecl
	for i := 0; i < len(pairs); i += 3 {
		out = append(out, evidence.EvidenceDecl{Spec: pairs[i].(string), Name: pairs[i+1].(string), Type: reflect.TypeOf(pairs[i+2])})
	}
	return out
}

// The catalog test's rule: a claim may only name evidence paths its specs
// declare, with values the declared type can take.
func TestCheckEvidence(t *testing.T) {
	cat := rules(t)
	all := decls("flow", "bound", boundEv{}, "flow", "binding", map[string]string{}, "flow", "running", runningEv{},
		"flow", "anon", struct {
			Code int `json:"code"`
		}{}, "anon-off", "anonOff", struct {
			Code int `json:"code"`
		}{}, "flow", "invalidAndForbidden", struct {
			Code int `json:"code"`
		}{}, "flow", "timing", struct {
			Pulled bool `json:"pulled"`
			PullMs struct {
				Median *float64 `json:"median,omitempty"`
				N      int      `json:"n"`
			} `json:"pullMs"`
		}{})
	if errs := CheckEvidence(cat, all); len(errs) != 0 {
		t.Fatalf("declared evidence reported: %v", errs)
	}
	// X-KUBELET names running.running, but running is declared without it;
	// X-COND's condition needs anonOff, declared as a string.
	broken := decls("flow", "bound", boundEv{}, "flow", "binding", map[string]string{}, "flow", "running", who{},
		"flow", "anon", struct {
			Code int `json:"code"`
		}{}, "anon-off", "anonOff", "", "flow", "invalidAndForbidden", struct {
			Code string `json:"code"`
		}{})
	text := ""
	for _, err := range CheckEvidence(cat, broken) {
		text += err.Error() + "\n"
	}
	for _, want := range []string{
		`claim X-KUBELET: evidence running.running: flow: running has no field "running"`,
		"claim X-COND: evidence anonOff.code: anon-off: anonOff is a string",
		"claim X-ORDER: evidence invalidAndForbidden.code: flow: = 403 wants a number, but the spec records a string",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("CheckEvidence did not report %q:\n%s", want, text)
		}
	}
}

// A path no spec records is reported with the nearest paths its specs do
// record; anyMatches needs a list, of strings for a pattern and of
// objects with the fields it names for fields.
func TestCheckEvidenceNearestAndAnyMatches(t *testing.T) {
	type entry struct {
		Verb string `json:"verb"`
		Code int    `json:"code"`
	}
	type auditEv struct {
		Entries []entry  `json:"entries"`
		Phases  []string `json:"phases"`
		Phase   string   `json:"phase"`
	}
	body := `document: {file: d.txt, title: t}
claims:
- {id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, specs: [flow], expect: [%s]}
`
	ds := decls("flow", "audit", auditEv{})
	for _, tc := range []struct{ expect, want string }{
		{"{evidence: audit.phaze, equals: x}", `claim A-B: evidence audit.phaze: flow: audit has no field "phaze" (it has entries, phase, phases); nearest: audit.phase, audit.phases`},
		{"{evidence: audti.phase, equals: x}", "claim A-B: evidence audti.phase is recorded by none of its specs [flow]; nearest: audit.phase, audit.phases"},
		{"{evidence: audit.entries, anyMatches: {verb: create, code: '^20'}}", ""},
		{"{evidence: audit.phases, anyMatches: Run}", ""},
		{"{evidence: audit.phase, anyMatches: Run}", "wants a list, but the spec records a string"},
		{"{evidence: audit.phases, anyMatches: {verb: x}}", "wants a list of objects"},
		{"{evidence: audit.entries, anyMatches: x}", "wants a list of strings"},
		{"{evidence: audit.entries, anyMatches: {vreb: x}}", `the list's elements have no field "vreb" (they have code, verb)`},
	} {
		cat, err := Load(fstest.MapFS{"x.yaml": {Data: []byte(fmt.Sprintf(body, tc.expect))}})
		if err != nil {
			t.Fatalf("%s: %v", tc.expect, err)
		}
		var got []string
		for _, err := range CheckEvidence(cat, ds) {
			got = append(got, err.Error())
		}
		text := strings.Join(got, "\n")
		// A path past half the mistyped one's length is not named.
		if (tc.want == "") != (len(got) == 0) || !strings.Contains(text, tc.want) || strings.Contains(text, "nearest: audit.phase, audit.phases, ") {
			t.Errorf("%s: %q, want %q", tc.expect, text, tc.want)
		}
	}
}

// Evidence compared with evidence is typed on both sides, and # is a
// length of a list.
func TestCheckEvidenceComparesEvidence(t *testing.T) {
	type step struct {
		At   float64 `json:"at"`
		Code int     `json:"code"`
		Name string  `json:"name"`
	}
	type stepsEv struct {
		Create step     `json:"create"`
		Delete step     `json:"delete"`
		Names  []string `json:"names"`
	}
	d := decls("p-one", "steps", stepsEv{})
	claim := func(exp string) string {
		return `apiVersion: kubeproof.io/v1alpha1
kind: Claims
document: {file: d.md, title: D}
claims:
- {id: X-ONE, section: s, quote: q, statement: st, component: c, kind: behaviour, specs: [p-one], expect: [` + exp + `]}
`
	}
	for exp, want := range map[string]string{
		`{evidence: steps.create.at, before: steps.delete.at}`:                 "",
		`{evidence: steps.delete.at, minus: steps.create.at, atMost: 5000}`:    "",
		`{evidence: steps.create.name, sameAs: steps.delete.name}`:             "",
		`{evidence: steps.names.#, equals: 2}`:                                 "",
		`{evidence: steps.create.at, sameAs: steps.delete.at, tolerance: 100}`: "",
		`{evidence: steps.create.name, before: steps.delete.at}`:               "steps.create.name is a string, not a number",
		`{evidence: steps.create.at, after: steps.delete.when}`:                `steps.delete has no field "when"`,
		`{evidence: steps.create.name, sameAs: steps.delete.code}`:             "can never hold",
		`{evidence: steps.delete.at, minus: steps.create.name, atLeast: 0}`:    "minus: steps.create.name is a string",
		`{evidence: steps.create.code.#, equals: 1}`:                           "# is the length of a list",
		`{evidence: steps.names.#, matches: x}`:                                "wants a string",
	} {
		cat, err := Load(fstest.MapFS{"d.yaml": {Data: []byte(claim(exp))}})
		if err != nil {
			t.Fatalf("%s: %v", exp, err)
		}
		errs := fmt.Sprint(CheckEvidence(cat, d))
		if want == "" && errs != "[]" || want != "" && !strings.Contains(errs, want) {
			t.Errorf("%s: %s, want %q", exp, errs, want)
		}
	}
}
