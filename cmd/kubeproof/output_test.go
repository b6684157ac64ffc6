package main

import (
	"bytes"
	"context"
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
	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/judge"
	"github.com/kubeproof/kubeproof/internal/report"
	"github.com/kubeproof/kubeproof/internal/runner"
)

// run runs the CLI in this process and returns its exit code and stdout.
func runOut(t *testing.T, args ...string) (exitcode.Code, string) {
	t.Helper()
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs(args)
	ctx := context.Background()
	return exitWith(ctx, root.ExecuteContext(ctx)), out.String()
}

// keys returns a JSON object's keys, sorted.
func keys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, raw)
	}
	return slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	})
}

// report diff -o json: the documented shape, exit 1 when a verdict differs
// and 0 with an empty list when none does.
func TestReportDiffJSON(t *testing.T) {
	write := func(verdict judge.Verdict) string {
		dir := t.TempDir()
		r := report.Report{SchemaVersion: report.SchemaVersion, Documents: []report.DocumentResult{{File: "d.txt", Title: "D",
			Claims: []judge.Result{
				{Claim: claims.Claim{ID: "D-ONE", Kind: claims.Behaviour}, Verdict: verdict},
				{Claim: claims.Claim{ID: "D-TWO", Kind: claims.Timing}, Verdict: verdict},
			}}}}
		if err := report.Write(dir, r); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	a, b, c := write(judge.Confirmed), write(judge.Refuted), write(judge.Confirmed)
	code, out := runOut(t, "report", "diff", "-o", "json", a, b)
	if code != exitcode.SpecsFailed {
		t.Fatalf("diff of differing runs: exit %d\n%s", code, out)
	}
	if got := keys(t, json.RawMessage(out)); !slices.Equal(got, []string{"differences", "runs", "schemaVersion", "timing"}) {
		t.Errorf("keys %v", got)
	}
	var doc diffJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SchemaVersion != "kubeproof.io/report-diff/v1" || !slices.Equal(doc.Runs, []string{a, b}) || doc.Timing || len(doc.Differences) != 1 ||
		doc.Differences[0].Claim != "D-ONE" || doc.Differences[0].Kind != "behaviour" || !slices.Equal(doc.Differences[0].Verdicts, []string{"confirmed", "refuted"}) {
		t.Errorf("diff document %+v", doc)
	}
	var first struct {
		Differences []json.RawMessage `json:"differences"`
	}
	_ = json.Unmarshal([]byte(out), &first)
	if got := keys(t, first.Differences[0]); !slices.Equal(got, []string{"claim", "kind", "verdicts"}) {
		t.Errorf("difference keys %v", got)
	}
	if code, out := runOut(t, "report", "diff", "-o", "json", "--timing", a, b); code != exitcode.SpecsFailed || !strings.Contains(out, `"D-TWO"`) {
		t.Errorf("with --timing: exit %d\n%s", code, out)
	}
	code, out = runOut(t, "report", "diff", "--output", "json", a, c)
	if code != exitcode.OK || !strings.Contains(out, `"differences": []`) {
		t.Errorf("diff of equal runs: exit %d\n%s", code, out)
	}
}

// The documents of status and run --dry-run have their documented keys,
// and empty lists are lists.
func TestStatusAndDryRunJSON(t *testing.T) {
	st, _ := json.Marshal(statusDoc("local", "kubeproof", cluster.Status{Up: true, Lines: []cluster.StatusLine{{Part: "etcd", State: "running", Detail: "pid 1"}}}))
	if got := keys(t, st); !slices.Equal(got, []string{"name", "parts", "provider", "schemaVersion", "up"}) {
		t.Errorf("status keys %v", got)
	}
	if !strings.Contains(string(st), `"parts":[{"part":"etcd","state":"running","detail":"pid 1"}]`) || !strings.Contains(string(st), `"schemaVersion":"kubeproof.io/status/v1"`) {
		t.Errorf("status %s", st)
	}
	down, _ := json.Marshal(statusDoc("local", "x", cluster.Status{}))
	if !strings.Contains(string(down), `"up":false,"parts":[]`) {
		t.Errorf("status of a cluster that is not up %s", down)
	}
	dr, _ := json.Marshal(dryRunDoc([]runner.SelectedSpec{{ID: "podflow-create", Text: "Pod creation flow ...", Claims: []string{"000-KUBECTL-HTTP"}}, {ID: "x"}}, 54))
	if got := keys(t, dr); !slices.Equal(got, []string{"schemaVersion", "specs", "total"}) {
		t.Errorf("dry-run keys %v", got)
	}
	if !strings.Contains(string(dr), `{"id":"podflow-create","text":"Pod creation flow ...","claims":["000-KUBECTL-HTTP"]},{"id":"x","text":"","claims":[]}`) {
		t.Errorf("dry-run %s", dr)
	}
}

// A bad --output or --junit-refuted-as is a usage error before anything
// is touched; -o json on run goes with --dry-run only.
func TestOutputFlagsUsage(t *testing.T) {
	for _, args := range [][]string{
		{"report", "diff", "-o", "yaml", "a", "b"},
		{"status", "--provider", "kubeconfig", "-o", "yaml"},
		{"run", "-o", "json"},
		{"run", "--dry-run", "-o", "wide"},
		{"run", "--junit-refuted-as", "maybe"},
		{"report", "--junit-refuted-as", "maybe"},
	} {
		if code, _ := exitFor(args...), ""; code != exitcode.Usage {
			t.Errorf("kubeproof %v: exit %d, want %d", args, code, exitcode.Usage)
		}
	}
}

// kubeproof report re-judges a run: --junit-refuted-as decides whether a
// refuted claim is a failure in claims-junit.xml, --fail-on-refuted the exit
// code, each apart from the other; junit.xml is written from specs.json.
func TestReportRefutedFlags(t *testing.T) {
	dir := t.TempDir()
	info := &cluster.Info{Provider: "test", Name: "t", Capabilities: []cluster.Capability{cluster.AuditLog}}
	if err := info.Save(filepath.Join(dir, "cluster.json")); err != nil {
		t.Fatal(err)
	}
	// podflow-create saw no write of the controller manager: claim
	// 000-STEP5-CONTROLLER-CREATES (it makes a request for the Pod) is refuted.
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	spec := types.SpecReport{
		ContainerHierarchyTexts: []string{"Pod creation flow"}, LeafNodeType: types.NodeTypeIt, LeafNodeText: "kubectl apply -f pod.yaml",
		LeafNodeLabels: []string{"spec:podflow-create", "claim:000-STEP5-CONTROLLER-CREATES"}, State: types.SpecStatePassed,
		StartTime: start, EndTime: start.Add(2 * time.Second), RunTime: 2 * time.Second, NumAttempts: 1,
		CapturedGinkgoWriterOutput: "STEP: apply\n",
		ReportEntries:              types.ReportEntries{{Name: "evidence:controllerWrites", Value: types.WrapEntryValue(map[string]any{"count": 0})}},
	}
	filtered := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "not selected", LeafNodeLabels: []string{"spec:podflow-delete"}, State: types.SpecStateSkipped}
	before := types.SpecReport{LeafNodeType: types.NodeTypeSynchronizedBeforeSuite, State: types.SpecStatePassed}
	specs, err := json.Marshal([]types.Report{{SuitePath: "/machine/path/.runner", SuiteDescription: "kubeproof", SuiteSucceeded: true,
		SpecReports: types.SpecReports{before, spec, filtered, before}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, runner.SpecsReportName), specs, 0o644); err != nil {
		t.Fatal(err)
	}
	failures := func() int {
		data, err := os.ReadFile(filepath.Join(dir, "claims-junit.xml"))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Failures int `xml:"failures,attr"`
		}
		if err := xml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Failures
	}
	for _, tc := range []struct {
		flags        []string
		code         exitcode.Code
		junitFailure bool
	}{
		{nil, exitcode.OK, true},
		{[]string{"--junit-refuted-as", "passed"}, exitcode.OK, false},
		{[]string{"--junit-refuted-as", "failure"}, exitcode.OK, true},
		{[]string{"--fail-on-refuted"}, exitcode.Refuted, true},
		{[]string{"--fail-on-refuted", "--junit-refuted-as", "passed"}, exitcode.Refuted, false},
	} {
		args := append([]string{"report", "--report-dir", dir, "--claims", "000-STEP5-CONTROLLER-CREATES"}, tc.flags...)
		code, out := runOut(t, args...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d\n%s", tc.flags, code, tc.code, out)
		}
		if n := failures(); (n > 0) != tc.junitFailure {
			t.Errorf("%v: claims-junit.xml has %d failures", tc.flags, n)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	junit := string(data)
	for _, want := range []string{`tests="2"`, `<testcase name="[SynchronizedBeforeSuite]"`, `<testcase name="Pod creation flow kubectl apply -f pod.yaml"`, `package=""`} {
		if !strings.Contains(junit, want) {
			t.Errorf("junit.xml lacks %s:\n%s", want, junit)
		}
	}
	for _, not := range []string{"not selected", "/machine/path", "spec:podflow-create", "STEP: apply"} {
		if strings.Contains(junit, not) {
			t.Errorf("junit.xml has %q:\n%s", not, junit)
		}
	}
}

// kubeproof report keeps an interrupted run's report partial: the claims of
// a spec stopped by the interrupt are not run, as the run said, not errors
// (which they are in a report that was not interrupted).
func TestReportKeepsPartial(t *testing.T) {
	dir := t.TempDir()
	info := &cluster.Info{Provider: "test", Name: "t", Capabilities: []cluster.Capability{cluster.AuditLog, cluster.EtcdAccess}}
	if err := info.Save(filepath.Join(dir, "cluster.json")); err != nil {
		t.Fatal(err)
	}
	stopped := types.SpecReport{ContainerHierarchyTexts: []string{"Pod creation flow"}, LeafNodeType: types.NodeTypeIt, LeafNodeText: "kubectl apply -f pod.yaml",
		LeafNodeLabels: []string{"spec:podflow-create", "claim:000-KUBECTL-HTTP"}, State: types.SpecStateInterrupted,
		Failure: types.Failure{Message: "Interrupted by User"}, NumAttempts: 1}
	specs, err := json.Marshal([]types.Report{{SuiteDescription: "kubeproof", SpecReports: types.SpecReports{stopped}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, runner.SpecsReportName), specs, 0o644); err != nil {
		t.Fatal(err)
	}
	verdict := func() (string, string) {
		r, err := report.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		return string(r.Documents[0].Claims[0].Verdict), r.Partial
	}
	if err := report.Write(dir, report.Report{Partial: "the run was interrupted"}); err != nil {
		t.Fatal(err)
	}
	if code, out := runOut(t, "report", "--report-dir", dir, "--claims", "000-KUBECTL-HTTP"); code != exitcode.OK {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if v, partial := verdict(); v != "not-run" || partial == "" {
		t.Errorf("judged again after an interrupt: %s, partial %q", v, partial)
	}
	if err := os.Remove(filepath.Join(dir, "claims.json")); err != nil {
		t.Fatal(err)
	}
	runOut(t, "report", "--report-dir", dir, "--claims", "000-KUBECTL-HTTP")
	if v, partial := verdict(); v != "error" || partial != "" {
		t.Errorf("judged without a partial report: %s, partial %q", v, partial)
	}
}
