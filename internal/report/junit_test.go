package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/internal/judge"
)

// One test case per claim: refuted fails only when asked, what could not be
// decided is skipped with its reason, an error is an error; the counts of
// the suites add up. A case is named by its claim's ID, points at its
// claim's line in its repository, takes its share of its specs' seconds
// (each spec counted once), and a failure's message is the verdict's
// reason.
func TestJUnitOneCasePerClaim(t *testing.T) {
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	claimsFile := filepath.Join(repo, "docs", "doc.yaml")
	if err := os.MkdirAll(filepath.Dir(claimsFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(claimsFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := func(id string, v judge.Verdict, specs ...judge.SpecRef) judge.Result {
		return judge.Result{Claim: claims.Claim{ID: id, Statement: "s " + id, Source: &evidence.Source{File: claimsFile, Line: 7}},
			Verdict: v, Reason: "because " + id, Specs: specs}
	}
	a := judge.SpecRef{ID: "spec-a", State: "passed", Seconds: 1.5}
	b := judge.SpecRef{ID: "spec-b", State: "passed", Seconds: 2.25}
	r := Report{Documents: []DocumentResult{{File: "doc.txt", Title: "Doc", Claims: []judge.Result{
		res("A", judge.Confirmed, a), res("B", judge.Refuted, a, b), res("C", judge.NotCheckable),
		res("D", judge.Error, b), res("E", judge.NotTestable), res("F", judge.Conditional), res("G", judge.Open),
	}}}}
	for _, refutedFails := range []bool{false, true} {
		var buf bytes.Buffer
		if err := JUnit(&buf, r, refutedFails); err != nil {
			t.Fatal(err)
		}
		var got junitSuites
		if err := xml.Unmarshal(buf.Bytes(), &got); err != nil {
			t.Fatalf("not XML: %v\n%s", err, buf.String())
		}
		wantFailures := 0
		if refutedFails {
			wantFailures = 1
		}
		if got.Tests != 7 || got.Failures != wantFailures || got.Errors != 1 || got.Skipped != 3 || len(got.Suites) != 1 || len(got.Suites[0].Cases) != 7 {
			t.Fatalf("refutedFails=%t: tests %d failures %d errors %d skipped %d\n%s", refutedFails, got.Tests, got.Failures, got.Errors, got.Skipped, buf.String())
		}
		// spec-a (1.5 s) decided A and B, spec-b (2.25 s) B and D: each
		// spec's seconds once in all, shared by its claims.
		if s := got.Suites[0]; s.Failures != wantFailures || s.Errors != 1 || s.Skipped != 3 || s.Time != "3.750" || got.Time != "3.750" {
			t.Errorf("suite %+v, all time %s", s, got.Time)
		}
		c := got.Suites[0].Cases
		if c[0].Name != "A" || c[0].Classname != "Doc" || c[0].File != "docs/doc.yaml" || c[0].Line != 7 ||
			c[0].Time != "0.750" || c[0].Failure != nil || c[0].Skipped != nil {
			t.Errorf("confirmed case %+v", c[0])
		}
		if p := c[0].Properties; p == nil || !slices.Contains(p.Property, junitProperty{"statement", "s A"}) || !slices.Contains(p.Property, junitProperty{"verdict", "confirmed"}) {
			t.Errorf("confirmed case's properties %+v", p)
		}
		if (c[1].Failure != nil) != refutedFails || c[1].SystemOut != "refuted: because B\nstatement: s B" || c[1].Time != "1.875" {
			t.Errorf("refuted case %+v", c[1])
		}
		if refutedFails && (c[1].Failure.Message != "because B" || c[1].Failure.Type != "refuted" ||
			!strings.Contains(c[1].Failure.Text, "claim: "+claimsFile+":7")) {
			t.Errorf("refuted failure %+v", c[1].Failure)
		}
		if c[2].Skipped == nil || c[2].Skipped.Message != "not-checkable: because C" || c[3].Error == nil || c[3].Error.Message != "because D" {
			t.Errorf("not checkable %+v, error %+v", c[2], c[3])
		}
		// An open claim has no check yet: skipped, saying what is missing.
		if c[6].Skipped == nil || c[6].Skipped.Message != "open: because G" || c[6].Failure != nil {
			t.Errorf("open case %+v", c[6])
		}
	}
}

// A test's name is its claim's ID (and title): rewording the statement
// renames no test, so CI readers keep its history.
func TestJUnitNamesSurviveStatementEdits(t *testing.T) {
	names := func(statement, title string) []string {
		r := Report{Documents: []DocumentResult{{File: "doc.txt", Title: "Doc", Claims: []judge.Result{
			{Claim: claims.Claim{ID: "DOC-A", Title: title, Statement: statement}, Verdict: judge.Confirmed},
		}}}}
		var buf bytes.Buffer
		if err := JUnit(&buf, r, true); err != nil {
			t.Fatal(err)
		}
		var got junitSuites
		if err := xml.Unmarshal(buf.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range got.Suites {
			for _, c := range s.Cases {
				out = append(out, c.Name)
			}
		}
		return out
	}
	before, after := names("A Pod is stored.", ""), names("The API server stores the Pod in etcd.", "")
	if !slices.Equal(before, after) || before[0] != "DOC-A" {
		t.Errorf("names %v before the edit, %v after", before, after)
	}
	if got := names("x", "Pod stored"); got[0] != "DOC-A: Pod stored" {
		t.Errorf("with a title: %v", got)
	}
}

// Specs that ran at once share the wall time: the shares add up to the
// time at least one ran, not to the sum of their durations.
func TestWallShares(t *testing.T) {
	at := func(s float64) time.Time { return time.Unix(1000, 0).Add(time.Duration(s * float64(time.Second))) }
	got := wallShares(map[string]span{
		"a": {at(0), at(10)},  // alone 0-2, with b 2-6, with b and c 4-6, alone 6-10
		"b": {at(2), at(6)},   // with a 2-4, with a and c 4-6
		"c": {at(4), at(6)},   // with a and b
		"d": {at(12), at(15)}, // alone, after a gap
		"e": {at(15), at(15)}, // no length
	})
	want := map[string]float64{"a": 2 + 1 + 2.0/3 + 4, "b": 1 + 2.0/3, "c": 2.0 / 3, "d": 3, "e": 0}
	total := 0.0
	for k, w := range want {
		if d := got[k] - w; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: %.4f s, want %.4f", k, got[k], w)
		}
		total += got[k]
	}
	if d := total - 13; d > 1e-9 || d < -1e-9 {
		t.Errorf("shares add up to %.4f s, want the 13 s covered", total)
	}
}

// A claims file is named relative to its repository's root; one that is
// not on this machine is not named at all.
func TestRepositoryPath(t *testing.T) {
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(repo, "a", "b.yaml")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := RepositoryPath(file); !ok || got != "a/b.yaml" {
		t.Errorf("in a repository: %q %v", got, ok)
	}
	if got, ok := RepositoryPath("fixtures/claims/not-here.yaml"); ok {
		t.Errorf("a file not on this machine: %q", got)
	}
}

// A class name has no dot: readers split it at the last one.
func TestClassname(t *testing.T) {
	for _, tc := range []struct{ title, file, want string }{
		{"Pod 생성 흐름", "000_9d571b7144dc736e.txt", "Pod 생성 흐름"},
		{"Kubernetes 1.37 notes", "notes.v2.md", "notes-v2"},
		{"", "000_9d571b7144dc736e.txt", "000_9d571b7144dc736e"},
	} {
		if got := Classname(DocumentResult{Title: tc.title, File: tc.file}); got != tc.want {
			t.Errorf("Classname(%q, %q) = %q, want %q", tc.title, tc.file, got, tc.want)
		}
	}
}

// junit.xml as CI readers keep it: spec texts as names, one entry per suite
// node type (the failed one of the parallel processes'), no spec the
// selection left out, no machine path, no timeline for a passed spec, and
// counts that are the cases' (an aborted spec is written as a failure and
// counted as one).
func TestSpecsJUnit(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	it := func(text string, state types.SpecState, msg string) types.SpecReport {
		return types.SpecReport{ContainerHierarchyTexts: []string{"Suite"}, LeafNodeType: types.NodeTypeIt, LeafNodeText: text,
			LeafNodeLabels: []string{"spec:" + text, "claim:X-" + text}, State: state, Failure: types.Failure{Message: msg},
			StartTime: start, EndTime: start.Add(time.Second), RunTime: time.Second, CapturedGinkgoWriterOutput: "STEP: " + text + "\n"}
	}
	node := func(nt types.NodeType, state types.SpecState, proc int) types.SpecReport {
		return types.SpecReport{LeafNodeType: nt, State: state, ParallelProcess: proc, Failure: types.Failure{Message: "setup " + state.String()}}
	}
	specs := types.SpecReports{
		node(types.NodeTypeSynchronizedBeforeSuite, types.SpecStatePassed, 1),
		it("passes", types.SpecStatePassed, ""),
		it("fails", types.SpecStateFailed, "boom"),
		it("aborts", types.SpecStateAborted, "gave up"),
		it("panics", types.SpecStatePanicked, "nil map"),
		it("skips", types.SpecStateSkipped, "no etcd access"),
		it("filtered", types.SpecStateSkipped, ""),
		node(types.NodeTypeSynchronizedAfterSuite, types.SpecStatePassed, 1),
		node(types.NodeTypeSynchronizedBeforeSuite, types.SpecStateFailed, 2),
		node(types.NodeTypeSynchronizedAfterSuite, types.SpecStatePassed, 2),
	}
	dir := t.TempDir()
	data, err := json.Marshal([]types.Report{{SuitePath: "/home/someone/.runner", SuiteDescription: "kubeproof", SpecReports: specs}})
	if err != nil {
		t.Fatal(err)
	}
	src, dst := filepath.Join(dir, "specs.json"), filepath.Join(dir, "junit.xml")
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SpecsJUnit(src, dst); err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	var got specsJUnitSuites
	if err := xml.Unmarshal(out, &got); err != nil {
		t.Fatalf("not XML: %v\n%s", err, out)
	}
	if len(got.TestSuites) != 1 {
		t.Fatalf("%d suites", len(got.TestSuites))
	}
	s := got.TestSuites[0]
	var names []string
	for _, c := range s.TestCases {
		names = append(names, c.Name)
	}
	want := []string{"[SynchronizedBeforeSuite]", "Suite passes", "Suite fails", "Suite aborts", "Suite panics", "Suite skips", "[SynchronizedAfterSuite]"}
	if !slices.Equal(names, want) {
		t.Errorf("names %q, want %q", names, want)
	}
	// The failed SynchronizedBeforeSuite of process 2, the failed spec and
	// the aborted one fail; the panic is an error.
	if s.Tests != 7 || s.Failures != 3 || s.Errors != 1 || s.Skipped != 1 || got.Tests != 7 || got.Failures != 3 || got.Errors != 1 || got.Skipped != 1 {
		t.Errorf("counts: suite %d/%d/%d/%d, top %d/%d/%d/%d", s.Tests, s.Failures, s.Errors, s.Skipped, got.Tests, got.Failures, got.Errors, got.Skipped)
	}
	if s.TestCases[0].Failure == nil || !strings.Contains(s.TestCases[0].Failure.Message, "setup failed") {
		t.Errorf("suite node %+v: not the failed one", s.TestCases[0])
	}
	if s.TestCases[1].SystemErr != "" || !strings.Contains(s.TestCases[2].SystemErr, "STEP: fails") {
		t.Errorf("timelines: passed %q, failed %q", s.TestCases[1].SystemErr, s.TestCases[2].SystemErr)
	}
	if strings.Contains(string(out), "/home/someone") || strings.Contains(string(out), "spec:") {
		t.Errorf("a machine path or a label in junit.xml:\n%s", out)
	}
}
