package falseclaims

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/expect"
	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/internal/judge"
	"github.com/kubeproof/kubeproof/internal/report/realrun"
	"github.com/kubeproof/kubeproof/internal/runner"
	"github.com/kubeproof/kubeproof/internal/tools/claimlint"
)

// examples are the worked examples, each with the providers of its kept
// runs (testdata/EXAMPLE-PROVIDER, README there).
var examples = map[string][]string{
	"pod-lifecycle":      {"local", "kind"},
	"deployment-rollout": {"local", "kind"},
}

const falseSuffix = "-FALSE"

func TestFalseClaimsAreRefuted(t *testing.T) {
	for example, providers := range examples {
		t.Run(example, func(t *testing.T) {
			dir := filepath.Join("..", "..", "docs", "examples", example)
			truePath, falsePath := filepath.Join(dir, "claims.yaml"), filepath.Join(dir, "false.yaml")
			lintClean(t, falsePath, filepath.Join(dir, "document.md"))
			trueCat, trueOwn := load(t, truePath)
			falseCat, falseOwn := load(t, falsePath)
			sameProbes(t, trueCat, falseCat)
			originals := pairs(t, trueOwn, falseOwn)
			notCheckable := notCheckableList(t, filepath.Join(dir, "not-checkable.txt"))
			for _, provider := range providers {
				t.Run(provider, func(t *testing.T) {
					run := unpack(t, filepath.Join("testdata", example+"-"+provider))
					info, err := cluster.Load(filepath.Join(run, "cluster.json"))
					if err != nil {
						t.Fatal(err)
					}
					// The run as it was: its claims keep the verdicts its
					// report gave them, so what is kept of it is all the
					// judge needs.
					want := runVerdicts(t, filepath.Join("testdata", example+"-"+provider, "verdicts.txt"))
					got := judged(t, run, "true", trueCat, trueOwn, info)
					for _, c := range trueOwn {
						if got[c.ID].Verdict != want[c.ID] {
							t.Errorf("%s: %s judged again is %s, the run's report says %s: %s", provider, c.ID, got[c.ID].Verdict, want[c.ID], got[c.ID].Reason)
						}
					}
					falseGot := judged(t, run, "false", falseCat, falseOwn, info)
					for _, f := range falseOwn {
						seenOtherWay(t, provider, f, originals[f.ID], got[originals[f.ID].ID], falseGot[f.ID], notCheckable)
					}
				})
			}
		})
	}
}

// seenOtherWay holds a claim written to be false to its verdict: refuted
// where its original is confirmed, the reason naming each expectation
// turned the other way with the value the run observed; where the provider
// cannot check the original (not-checkable.txt), not checkable for the
// same reason.
func seenOtherWay(t *testing.T, provider string, f, orig claims.Claim, origGot, got judge.Result, notCheckable map[string]bool) {
	t.Helper()
	switch {
	case origGot.Verdict == judge.NotCheckable && notCheckable[provider+" "+orig.ID]:
		if got.Verdict != judge.NotCheckable || got.Reason != origGot.Reason {
			t.Errorf("%s: %s is %s (%s), where %s is not checkable: %s", provider, f.ID, got.Verdict, got.Reason, orig.ID, origGot.Reason)
		}
	case origGot.Verdict != judge.Confirmed:
		t.Errorf("%s: %s copies %s, which is %s here, not confirmed: turned the other way it shows nothing", provider, f.ID, orig.ID, origGot.Verdict)
	case got.Verdict != judge.Refuted:
		t.Errorf("%s: %s, written to be false, is %s: %s", provider, f.ID, got.Verdict, got.Reason)
	default:
		for _, e := range flipped(f, orig) {
			if !strings.Contains(got.Reason, e.Evidence+" = ") && !strings.Contains(got.Reason, e.Evidence+" − ") {
				t.Errorf("%s: %s is refuted without the observed %s: %s", provider, f.ID, e.Evidence, got.Reason)
			}
		}
	}
}

// lintClean is claims lint of the file against the document: no problem,
// no warning.
func lintClean(t *testing.T, path, document string) {
	t.Helper()
	text, err := os.ReadFile(document)
	if err != nil {
		t.Fatal(err)
	}
	n, problems, _, warnings := claimlint.File(path, &claimlint.Document{Name: document, Text: string(text)})
	if n == 0 || len(problems) > 0 || len(warnings) > 0 {
		t.Fatalf("claims lint %s: %d claims, problems %q, warnings %q", path, n, problems, warnings)
	}
}

// load is the built-in catalog with the claims file added, as report
// --claims-file loads it, and the file's own claims.
func load(t *testing.T, path string) (*claims.Catalog, []claims.Claim) {
	t.Helper()
	cat, err := claims.LoadAt(fixtures.Claims(), fixtures.ClaimsDir)
	if err != nil {
		t.Fatal(err)
	}
	before := len(cat.Claims)
	if err := cat.AddFile(path); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cat, cat.Claims[before:]
}

// sameProbes: every probe of the false file is the example's probe of that
// ID, unchanged (a claims file holds the probes its claims name, so the
// false file carries copies, which must not drift from what ran).
func sameProbes(t *testing.T, trueCat, falseCat *claims.Catalog) {
	t.Helper()
	for _, fp := range falseCat.Probes {
		found := false
		for _, tp := range trueCat.Probes {
			if tp.ID == fp.ID {
				found = true
				if !reflect.DeepEqual(asJSON(t, tp.Probe), asJSON(t, fp.Probe)) {
					t.Errorf("probe %s of the false file differs from claims.yaml's: copy it again", fp.ID)
				}
			}
		}
		if !found {
			t.Errorf("probe %s of the false file is not one of claims.yaml", fp.ID)
		}
	}
}

// pairs maps each claim written to be false to the claim it copies: its ID
// without -FALSE, the same quote, section and specs, and at least one
// expectation of its own.
func pairs(t *testing.T, trueOwn, falseOwn []claims.Claim) map[string]claims.Claim {
	t.Helper()
	out := map[string]claims.Claim{}
	for _, f := range falseOwn {
		id, ok := strings.CutSuffix(f.ID, falseSuffix)
		if !ok {
			t.Errorf("%s: a claim of the false file's ID ends with %s", f.ID, falseSuffix)
			continue
		}
		var orig *claims.Claim
		for i := range trueOwn {
			if trueOwn[i].ID == id {
				orig = &trueOwn[i]
			}
		}
		switch {
		case orig == nil:
			t.Errorf("%s copies no claim of claims.yaml (no %s)", f.ID, id)
			continue
		case f.Quote != orig.Quote || f.Section != orig.Section || !reflect.DeepEqual(f.Specs, orig.Specs):
			t.Errorf("%s: its quote, section or specs are not %s's", f.ID, id)
		case len(flipped(f, *orig)) == 0:
			t.Errorf("%s: no expectation turned the other way: it is %s", f.ID, id)
		}
		out[f.ID] = *orig
	}
	if len(out) == 0 {
		t.Error("the false file has no claim")
	}
	return out
}

// flipped are the expectations of f that its original does not have.
func flipped(f, orig claims.Claim) []expect.Expectation {
	var out []expect.Expectation
	for _, e := range f.Expect {
		found := false
		for _, o := range orig.Expect {
			found = found || reflect.DeepEqual(asJSONOf(e), asJSONOf(o))
		}
		if !found {
			out = append(out, e)
		}
	}
	return out
}

// asJSON is v as JSON, decoded: values compared as the file writes them
// (a compiled expression compares by its text).
func asJSON(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func asJSONOf(e expect.Expectation) string {
	data, _ := json.Marshal(e)
	return string(data)
}

// notCheckableList is the example's not-checkable.txt as "PROVIDER ID".
func notCheckableList(t *testing.T, path string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return out
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) >= 2 && !strings.HasPrefix(fields[0], "#") {
			out[fields[0]+" "+fields[1]] = true
		}
	}
	return out
}

// runVerdicts are the verdicts of the run's report: "ID verdict" a line.
func runVerdicts(t *testing.T, path string) map[string]judge.Verdict {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]judge.Verdict{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		id, v, _ := strings.Cut(line, " ")
		out[id] = judge.Verdict(v)
	}
	return out
}

// unpack makes a report directory of the kept run: its specs.json (kept
// gzipped) and cluster.json.
func unpack(t *testing.T, kept string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	realrun.Gunzip(t, filepath.Join(kept, runner.SpecsReportName+".gz"), filepath.Join(dir, runner.SpecsReportName))
	info, err := os.ReadFile(filepath.Join(kept, "cluster.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cluster.json"), info, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// judged judges the run again with the claims given, as kubeproof report
// --claims-file does, into a directory of its own, by claim ID.
func judged(t *testing.T, run, name string, cat *claims.Catalog, own []claims.Claim, info *cluster.Info) map[string]judge.Result {
	t.Helper()
	rep, err := runner.JudgeAgain(run, filepath.Join(filepath.Dir(run), name), cat, own, info, false, false)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]judge.Result{}
	for _, d := range rep.Documents {
		for _, r := range d.Claims {
			out[r.Claim.ID] = r
		}
	}
	if len(out) != len(own) {
		t.Fatalf("judged %d claims of %d", len(out), len(own))
	}
	return out
}
