package faults

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/internal/jsonschema"
	"github.com/kubeproof/kubeproof/internal/judge"
	"github.com/kubeproof/kubeproof/internal/report"
)

func catalog(t *testing.T) *claims.Catalog {
	t.Helper()
	cat, err := claims.Load(fstest.MapFS{"d.yaml": {Data: []byte(`
document: {file: d.txt, title: D}
claims:
- {id: A-SCHED, section: s, quote: q, statement: s, component: kube-scheduler, kind: behaviour, specs: [sp-x], expect: [{evidence: e.v, equals: 1}]}
- {id: A-KUBELET, section: s, quote: q, statement: s, component: kubelet, kind: behaviour, specs: [sp-x], expect: [{evidence: e.v, equals: 1}]}
- {id: A-OTHER, section: s, quote: q, statement: s, component: etcd, kind: behaviour, specs: [sp-x], expect: [{evidence: e.v, equals: 1}]}
- {id: A-TIME, section: s, quote: q, statement: s, component: kubelet, kind: timing, specs: [sp-x], claimed: 1 ms, expect: [{evidence: e.v, atMost: 1}]}
`)}})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func run(cat *claims.Catalog, verdicts map[string]judge.Verdict) report.Report {
	var results []judge.Result
	for _, c := range cat.Claims {
		results = append(results, judge.Result{Claim: c, Verdict: verdicts[c.ID], Reason: "because"})
	}
	return report.New(cat.Documents, results, judge.Run{}, nil)
}

func TestParseChecksTheCatalog(t *testing.T) {
	cat := catalog(t)
	if _, err := Parse([]byte(`faults: [{id: f, component: c, description: d, without: [kube-scheduler], refutes: [A-NOPE]}]`), cat); err == nil || !strings.Contains(err.Error(), "A-NOPE") {
		t.Errorf("a fault naming an unknown claim: %v", err)
	}
	if _, err := Parse([]byte(`faults: [{id: f, component: c, description: d, refutes: [A-SCHED]}]`), cat); err == nil || !strings.Contains(err.Error(), "how to break") {
		t.Errorf("a fault that says not how it is made: %v", err)
	}
	if _, err := Parse([]byte(`faults: [{id: f, component: c, description: d, without: [x]}]`), cat); err == nil || !strings.Contains(err.Error(), "lists no claim") {
		t.Errorf("a fault that expects nothing: %v", err)
	}
}

// The matrix kubeproof carries names only claims of its catalog.
func TestShippedMatrixParses(t *testing.T) {
	cat, err := claims.Load(fixtures.Claims())
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(fixtures.MustRead("faults.yaml"), cat)
	if err != nil {
		t.Fatal(err)
	}
	ci, _ := m.Select(nil, true)
	if len(m.Faults) < 8 || len(ci) == 0 || len(ci) >= len(m.Faults) {
		t.Errorf("%d faults, %d for CI", len(m.Faults), len(ci))
	}
}

func TestCheck(t *testing.T) {
	cat := catalog(t)
	f := Fault{ID: "no-scheduler", Refutes: []string{"A-SCHED"}, NotCheckable: []string{"A-KUBELET"}, MaxChanged: 0}
	healthy := run(cat, map[string]judge.Verdict{"A-SCHED": judge.Confirmed, "A-KUBELET": judge.Confirmed, "A-OTHER": judge.Confirmed, "A-TIME": judge.Within})

	found := Check(f, healthy, run(cat, map[string]judge.Verdict{"A-SCHED": judge.Refuted, "A-KUBELET": judge.NotCheckable, "A-OTHER": judge.Confirmed, "A-TIME": judge.Slower}))
	if !found.Detected || len(found.Changed) != 0 || found.RefutedByComponent["kube-scheduler"][0] != "A-SCHED" {
		t.Errorf("a fault found as listed (a timing claim changing aside): %+v", found)
	}
	missed := Check(f, healthy, run(cat, map[string]judge.Verdict{"A-SCHED": judge.Confirmed, "A-KUBELET": judge.Error, "A-OTHER": judge.Refuted, "A-TIME": judge.Within}))
	if missed.Detected || len(missed.Missed) != 2 || len(missed.Errors) != 1 || len(missed.Changed) != 1 {
		t.Errorf("a fault not found: %+v", missed)
	}
	var md bytes.Buffer
	if err := Markdown(&md, []Outcome{found, missed}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| `no-scheduler` |", "✅", "❌", "A-SCHED: confirmed, want refuted"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("faults.md lacks %q:\n%s", want, md.String())
		}
	}
}

// faults.json (WriteReports) is what schemas/output says.
func TestFaultsJSONValidates(t *testing.T) {
	cat := catalog(t)
	f := Fault{ID: "no-scheduler", Refutes: []string{"A-SCHED"}, NotCheckable: []string{"A-KUBELET"}, MaxChanged: 0}
	healthy := run(cat, map[string]judge.Verdict{"A-SCHED": judge.Confirmed, "A-KUBELET": judge.Confirmed, "A-OTHER": judge.Confirmed, "A-TIME": judge.Within})
	found := Check(f, healthy, run(cat, map[string]judge.Verdict{"A-SCHED": judge.Refuted, "A-KUBELET": judge.NotCheckable, "A-OTHER": judge.Confirmed, "A-TIME": judge.Slower}))
	missed := Check(f, healthy, run(cat, map[string]judge.Verdict{"A-SCHED": judge.Confirmed, "A-KUBELET": judge.Error, "A-OTHER": judge.Refuted, "A-TIME": judge.Within}))
	dir := t.TempDir()
	if err := WriteReports(dir, []Outcome{found, missed}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "faults.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := jsonschema.Validate("../../../schemas/output/faults-v1.json", data); err != nil {
		t.Errorf("faults.json: %v\n%s", err, data)
	}
}
