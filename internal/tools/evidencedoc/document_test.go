package evidencedoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/claims/expect"
	"github.com/kubeproof/kubeproof/claims/speclink"
	"github.com/kubeproof/kubeproof/contract/cluster"
)

type eventsEvidence struct {
	Reasons []string       `json:"reasons"`
	Counts  map[string]int `json:"counts"`
	Items   []inner        `json:"items"`
	None    []string       `json:"none"`
	Missing string         `json:"missing"`
}

func fakeInput(t *testing.T) Input {
	t.Helper()
	ex, err := ReadExamples("testdata")
	if err != nil {
		t.Fatal(err)
	}
	return Input{
		Decls: []evidence.EvidenceDecl{{Spec: "pod-events", Name: "events", Type: reflect.TypeFor[eventsEvidence](), Source: evidence.Source{File: "suites/x/x.go", Line: 3}}},
		Meanings: Meanings{"pod-events": {
			"events":         {Text: "The Pod's events. In order.", From: "type x.eventsEvidence"},
			"events.reasons": {Text: "Reasons, oldest first.", From: "field x.eventsEvidence.Reasons"},
		}},
		Catalog: &claims.Catalog{Claims: []claims.Claim{
			{ID: "A-REASONS", Specs: []string{"pod-events"}, Requires: []cluster.Capability{cluster.AuditLog},
				Expect: []expect.Expectation{{Evidence: "events.reasons.1"}}},
			{ID: "B-WHOLE", Specs: []string{"pod-events", "other"}, Requires: []cluster.Capability{cluster.EtcdAccess},
				Context: []string{"events"}},
			{ID: "C-OTHER-SPEC", Specs: []string{"other"}, Requires: []cluster.Capability{cluster.NodeExec},
				Expect: []expect.Expectation{{Evidence: "events.reasons"}}},
		}},
		SpecNeeds: map[string]SpecNeeds{"pod-events": {Requires: []cluster.Capability{cluster.NodeExec}, Uses: []cluster.Capability{cluster.AuditLog}}},
		Examples:  ex,
		ReportDir: "testdata",
	}
}

func byPath(doc Document) map[string]Path {
	out := map[string]Path{}
	for _, p := range doc.Paths {
		out[p.Path] = p
	}
	return out
}

// A list's example is the list (not empty, as when only leaves were
// kept), its element's the first; a map's {key} is its first key; a path
// the run did not record has none.
func TestExamples(t *testing.T) {
	paths := byPath(Build(fakeInput(t)))
	for path, want := range map[string]string{
		"events.reasons":      `["Scheduled","Pulled"]`,
		"events.reasons.0":    `"Scheduled"`,
		"events.counts":       `{"a":1,"b":2}`,
		"events.counts.{key}": `1`,
		"events.items":        `[{"name":"first"}]`,
		"events.items.0.name": `"first"`,
		"events.none":         `[]`,
		"events.missing":      ``,
	} {
		if got := string(paths[path].Example); got != want {
			t.Errorf("%s: example %s, want %s", path, got, want)
		}
	}
}

// A path's claims are those of its spec that read it, the object holding
// it, or a part of it; their requires: are the path's capabilities.
func TestClaimsRequire(t *testing.T) {
	paths := byPath(Build(fakeInput(t)))
	for path, want := range map[string]string{
		"events":           "A-REASONS,B-WHOLE: AuditLog,EtcdAccess",
		"events.reasons":   "A-REASONS,B-WHOLE: AuditLog,EtcdAccess",
		"events.reasons.0": "A-REASONS,B-WHOLE: AuditLog,EtcdAccess",
		"events.counts":    "B-WHOLE: EtcdAccess",
	} {
		p := paths[path]
		if got := strings.Join(p.Claims, ",") + ": " + capabilities(p.ClaimsRequire); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
}

// -o json's document: its schema, every path with a type, lists never
// null, meanings where given.
func TestDocumentJSON(t *testing.T) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	if err := enc.Encode(Build(fakeInput(t))); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		SchemaVersion string           `json:"schemaVersion"`
		Paths         []map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SchemaVersion != Schema || len(doc.Paths) != 10 {
		t.Fatalf("schema %q, %d paths", doc.SchemaVersion, len(doc.Paths))
	}
	for _, p := range doc.Paths {
		if p["type"] == "" || p["claims"] == nil || p["claimsRequire"] == nil || p["specUses"] == nil {
			t.Errorf("%v: no type, or a null list", p)
		}
	}
	if p := doc.Paths[0]; p["path"] != "events" || p["meaning"] != "The Pod's events. In order." ||
		fmt.Sprint(p["specRequires"]) != "[NodeExec]" || fmt.Sprint(p["specUses"]) != "[AuditLog]" {
		t.Errorf("first path %v", p)
	}
}

// The table shows a meaning's first sentence and examples cut short.
func TestTable(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, Build(fakeInput(t))); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"SPEC REQUIRES", "EXAMPLE", "The Pod's events.  ", `["Scheduled","Pulled"]`, "NodeExec", "AuditLog,EtcdAccess"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

func TestFirstSentence(t *testing.T) {
	for in, want := range map[string]string{
		"One. Two.":                      "One.",
		"The scheme (e.g. Bearer). More": "The scheme (e.g. Bearer).",
		"No end":                         "No end",
		"Ends i.e. here":                 "Ends i.e. here",
	} {
		if got := firstSentence(in); got != want {
			t.Errorf("firstSentence(%q) = %q, want %q", in, got, want)
		}
	}
}

// A spec's needs are what it declares: its requires: and uses: labels.
func TestNeedsOf(t *testing.T) {
	specs := []speclink.SpecInfo{
		speclink.SpecsFromLabels("a", []string{"spec:a-b", "requires:EtcdAccess", "uses:AuditLog"}),
		speclink.SpecsFromLabels("no id", []string{"uses:AuditLog"}),
	}
	got := NeedsOf(specs)
	want := map[string]SpecNeeds{"a-b": {Requires: []cluster.Capability{cluster.EtcdAccess}, Uses: []cluster.Capability{cluster.AuditLog}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("NeedsOf: %+v, want %+v", got, want)
	}
}
