package claims

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kubeproof/kubeproof/framework/cluster"
)

func load(t *testing.T) *Catalog { return testCatalog(t, "catalog.yaml") }

// testCatalog loads a catalog of testdata as the one document of a tree.
func testCatalog(t *testing.T, file string) *Catalog {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := Load(fstest.MapFS{"doc.yaml": {Data: data}})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func info(caps ...cluster.Capability) *cluster.Info {
	return &cluster.Info{Provider: "test", Capabilities: caps}
}

func verdicts(rs []Result) map[string]Verdict {
	out := map[string]Verdict{}
	for _, r := range rs {
		out[r.Claim.ID] = r.Verdict
	}
	return out
}

func TestJudge(t *testing.T) {
	cat := load(t)
	spec := func(id, state string, ev string) SpecResult {
		var m map[string]any
		if err := json.Unmarshal([]byte(ev), &m); err != nil {
			t.Fatal(err)
		}
		return SpecResult{ID: id, State: state, Evidence: m, Message: "boom"}
	}
	cases := []struct {
		name  string
		specs map[string]SpecResult
		info  *cluster.Info
		want  map[string]Verdict
	}{
		{"confirmed and refuted from evidence", map[string]SpecResult{
			"spec-a": spec("spec-a", "passed", `{"stored":{"nodeName":"","phase":"Pending"},"anon":{"code":403},"anonOff":{"code":401}}`),
			"spec-b": spec("spec-b", "passed", `{"timing":{"ms":30}}`),
		}, info(cluster.AuditLog), map[string]Verdict{"X-STORED": Confirmed, "X-AUTH": Conditional, "X-TIME": Faster, "X-OPINION": NotTestable}},
		{"a missing capability is not checkable", map[string]SpecResult{
			"spec-a": spec("spec-a", "passed", `{"stored":{"nodeName":"n1","phase":"Pending"}}`),
		}, info(), map[string]Verdict{"X-STORED": Refuted, "X-AUTH": NotCheckable, "X-TIME": NotRun}},
		{"a failed spec without evidence is an error", map[string]SpecResult{
			"spec-a": spec("spec-a", "failed", `{"stored":{"nodeName":""}}`),
			"spec-b": spec("spec-b", "skipped", `{}`),
		}, info(cluster.AuditLog), map[string]Verdict{"X-STORED": Error, "X-AUTH": Error, "X-TIME": NotCheckable}},
		{"a passed spec without the evidence is an error too", map[string]SpecResult{
			"spec-b": spec("spec-b", "passed", `{"timing":{}}`),
		}, info(), map[string]Verdict{"X-TIME": Error}},
	}
	for _, tc := range cases {
		got := verdicts(Judge(cat.Claims, tc.specs, tc.info))
		for id, want := range tc.want {
			if got[id] != want {
				t.Errorf("%s: %s = %s, want %s", tc.name, id, got[id], want)
			}
		}
	}
}

// A refuted verdict explains itself with what was observed.
func TestRefutedReasonShowsObservation(t *testing.T) {
	cat := load(t)
	specs := map[string]SpecResult{"spec-a": {ID: "spec-a", State: "passed", Evidence: map[string]any{
		"stored": map[string]any{"nodeName": "node-1", "phase": "Pending"}}}}
	r := Judge(cat.Claims[:1], specs, info())[0]
	if r.Verdict != Refuted || !strings.Contains(r.Reason, `stored.nodeName = "node-1"`) {
		t.Fatalf("verdict %s, reason %q", r.Verdict, r.Reason)
	}
}

func TestValidateRejects(t *testing.T) {
	bad := map[string]string{
		"no spec":                 "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, expect: [{evidence: e, equals: 1}]}]",
		"no expectation":          "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, specs: [x-y]}]",
		"two operators":           "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, specs: [x-y], expect: [{evidence: e, equals: 1, atLeast: 2}]}]",
		"bad kind":                "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: vibe, specs: [x-y], expect: [{evidence: e, equals: 1}]}]",
		"unknown field":           "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, specs: [x-y], expect: [{evidence: e, equals: 1}], verdict: confirmed}]",
		"untestable with spec":    "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, specs: [x-y], notTestable: why}]",
		"duplicate id":            "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, notTestable: why}, {id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, notTestable: why}]",
		"source written":          "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, notTestable: why, source: {file: f, line: 1}}]",
		"timing without a number": "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: timing, specs: [x-y], expect: [{evidence: e, atMost: 1}]}]",
		"timing without a range":  "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: timing, specs: [x-y], claimed: 1 s, expect: [{evidence: e, equals: 1}]}]",
	}
	for name, body := range bad {
		_, err := Load(fstest.MapFS{"x.yaml": {Data: []byte("document: {file: d.txt, title: t}\n" + body)}})
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Each claim knows the file and the line of its id, in block and in flow
// style, under the directory the catalog was loaded from.
func TestSourceLines(t *testing.T) {
	doc := `# a comment
document: {file: d.txt, title: t}
claims:
- id: A-ONE
  section: s
  quote: q
  statement: s
  component: c
  kind: behaviour
  notTestable: why

-   section: s
    quote: q
    id: A-TWO
    statement: s
    component: c
    kind: behaviour
    notTestable: why
- {id: A-THREE, section: s, quote: q, statement: s, component: c, kind: behaviour, notTestable: why}
`
	cat, err := LoadAt(fstest.MapFS{"d.yaml": {Data: []byte(doc)}}, "fixtures/claims")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"A-ONE": 4, "A-TWO": 14, "A-THREE": 19}
	for _, c := range cat.Claims {
		if c.Source == nil || c.Source.File != "fixtures/claims/d.yaml" || c.Source.Line != want[c.ID] {
			t.Errorf("%s: source %+v, want fixtures/claims/d.yaml:%d", c.ID, c.Source, want[c.ID])
		}
	}
}

func TestExpectations(t *testing.T) {
	raw := func(s string) *json.RawMessage { r := json.RawMessage(s); return &r }
	f := func(x float64) *float64 { return &x }
	cases := []struct {
		e    Expectation
		v    any
		want bool
	}{
		{Expectation{Equals: raw(`""`)}, "", true},
		{Expectation{Equals: raw(`""`)}, "n1", false},
		{Expectation{Equals: raw(`201`)}, float64(201), true},
		{Expectation{NotEquals: raw(`0`)}, float64(3), true},
		{Expectation{OneOf: []json.RawMessage{json.RawMessage(`"update"`), json.RawMessage(`"patch"`)}}, "create", false},
		{Expectation{Matches: `spec\.nodeName=(,|$)`}, "status.phase!=Succeeded", false},
		{Expectation{Matches: `spec\.nodeName=(,|$)`}, "spec.nodeName=", true},
		{Expectation{Contains: raw(`"Ready"`)}, []any{"Initialized", "Ready"}, true},
		{Expectation{Contains: raw(`"nodeName"`)}, "spec.nodeName=x", true},
		{Expectation{AtLeast: f(100), AtMost: f(500)}, float64(30), false},
		{Expectation{AtLeast: f(100), AtMost: f(500)}, float64(300), true},
		{Expectation{AtLeast: f(1)}, "1", false},
	}
	for i, tc := range cases {
		if got := tc.e.Holds(tc.v); got != tc.want {
			t.Errorf("case %d (%s on %v): %t, want %t", i, tc.e.Want(), tc.v, got, tc.want)
		}
	}
	ev := map[string]any{"a": map[string]any{"b": []any{"x", map[string]any{"c": 1.0}}}}
	if v, ok := Lookup(ev, "a.b.1.c"); !ok || v != 1.0 {
		t.Errorf("Lookup = %v, %t", v, ok)
	}
	if _, ok := Lookup(ev, "a.b.7"); ok {
		t.Error("Lookup past the end of a list")
	}
}

func TestCheckLinks(t *testing.T) {
	cat := load(t)
	ok := []SpecInfo{
		{ID: "spec-a", Name: "a", Claims: []string{"X-STORED", "X-AUTH"}},
		{ID: "spec-b", Name: "b", Claims: []string{"X-TIME"}},
	}
	if errs := CheckLinks(cat, ok); len(errs) != 0 {
		t.Fatalf("consistent links reported: %v", errs)
	}
	broken := []SpecInfo{
		{ID: "spec-a", Name: "a", Claims: []string{"X-STORED", "X-UNKNOWN"}}, // X-AUTH label missing, unknown label
		{ID: "", Name: "no id", Claims: []string{"X-TIME"}},                  // spec-b missing, no ID
		{ID: "spec-c", Name: "c"},                                            // no claim label
	}
	errs := CheckLinks(cat, broken)
	text := ""
	for _, e := range errs {
		text += e.Error() + "\n"
	}
	for _, want := range []string{"X-UNKNOWN", "no spec:<id> label", "carries no claim:<id> label", "names spec spec-b, which does not exist", "does not carry the label claim:X-AUTH"} {
		if !strings.Contains(text, want) {
			t.Errorf("CheckLinks did not report %q:\n%s", want, text)
		}
	}
}

func TestLoadGinkgoReport(t *testing.T) {
	report := `[{"SpecReports":[{"LeafNodeType":"It","LeafNodeText":"does x","LeafNodeLabels":["spec:spec-a","claim:X-STORED"],
	"State":"passed","RunTime":1000000,"ReportEntries":[{"Name":"evidence:stored","Value":{"AsJSON":"{\"nodeName\":\"\"}","Representation":""}},
	{"Name":"not-evidence","Value":{"AsJSON":"1"}}]}]}]`
	path := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := LoadGinkgoReport(path)
	if err != nil {
		t.Fatal(err)
	}
	specs := run.Specs
	s, ok := specs["spec-a"]
	if !ok || s.State != "passed" {
		t.Fatalf("specs = %+v", specs)
	}
	if v, ok := Lookup(s.Evidence, "stored.nodeName"); !ok || v != "" {
		t.Fatalf("evidence = %v", s.Evidence)
	}
	if len(s.Evidence) != 1 {
		t.Fatalf("non-evidence entries read as evidence: %v", s.Evidence)
	}
}

// A file's header names this schema; a file without one loads with a hint
// naming it, and a wrong one is refused with an error naming the file.
func TestHeader(t *testing.T) {
	body := "document: {file: d.txt, title: t}\nclaims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, notTestable: why}]\n"
	for name, tc := range map[string]struct {
		header, err string
		hints       int
	}{
		"header":      {header: "apiVersion: kubeproof.io/v1alpha1\nkind: Claims\n"},
		"none":        {hints: 1},
		"old version": {header: "apiVersion: kubeproof.io/v0\nkind: Claims\n", err: `claims file fixtures/claims/x.yaml: apiVersion "kubeproof.io/v0", want kubeproof.io/v1alpha1`},
		"other kind":  {header: "apiVersion: kubeproof.io/v1alpha1\nkind: Claim\n", err: `claims file fixtures/claims/x.yaml: kind "Claim", want Claims`},
		"no kind":     {header: "apiVersion: kubeproof.io/v1alpha1\n", err: `claims file fixtures/claims/x.yaml: kind "", want Claims`},
	} {
		cat, err := LoadAt(fstest.MapFS{"x.yaml": {Data: []byte(tc.header + body)}}, "fixtures/claims")
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: error %v, want %s", name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(cat.Hints) != tc.hints {
			t.Errorf("%s: hints %q, want %d", name, cat.Hints, tc.hints)
		}
	}
}
