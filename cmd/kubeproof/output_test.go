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
	"github.com/kubeproof/kubeproof/internal/jsonschema"
	"github.com/kubeproof/kubeproof/internal/judge"
	"github.com/kubeproof/kubeproof/internal/report"
	"github.com/kubeproof/kubeproof/internal/runner"
	"github.com/kubeproof/kubeproof/internal/tools/jsonout"
)

// validates checks a JSON document kubeproof wrote against the schema
// shipped for its schemaVersion (schemas/output, jsonout.Outputs).
func validates(t *testing.T, what string, data []byte) {
	t.Helper()
	var head struct {
		SchemaVersion string `json:"schemaVersion"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		t.Errorf("%s: not a JSON object: %v", what, err)
		return
	}
	o, ok := jsonout.Find(head.SchemaVersion)
	if !ok {
		t.Errorf("%s: schemaVersion %q is none of jsonout.Outputs", what, head.SchemaVersion)
		return
	}
	if err := jsonschema.Validate(filepath.Join("..", "..", o.File()), data); err != nil {
		t.Errorf("%s does not validate against %s: %v", what, o.File(), err)
	}
	validated[head.SchemaVersion] = append(validated[head.SchemaVersion], what)
}

// validated are the documents validates checked, by schemaVersion.
var validated = map[string][]string{}

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
	var doc jsonout.Diff
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
	st, _ := json.Marshal(jsonout.NewStatus("local", "kubeproof", cluster.Status{Up: true, Lines: []cluster.StatusLine{{Part: "etcd", State: "running", Detail: "pid 1"}}}))
	if got := keys(t, st); !slices.Equal(got, []string{"name", "parts", "provider", "schemaVersion", "up"}) {
		t.Errorf("status keys %v", got)
	}
	if !strings.Contains(string(st), `"parts":[{"part":"etcd","state":"running","detail":"pid 1"}]`) || !strings.Contains(string(st), `"schemaVersion":"kubeproof.io/status/v1"`) {
		t.Errorf("status %s", st)
	}
	down, _ := json.Marshal(jsonout.NewStatus("local", "x", cluster.Status{}))
	if !strings.Contains(string(down), `"up":false,"parts":[]`) {
		t.Errorf("status of a cluster that is not up %s", down)
	}
	dr, _ := json.Marshal(jsonout.NewDryRun([]runner.SelectedSpec{{ID: "podflow-create", Text: "Pod creation flow ...", Claims: []string{"000-KUBECTL-HTTP"}}, {ID: "x"}}, 54))
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
		args := append([]string{"report", "--report-dir", dir, "--overwrite", "--claims", "000-STEP5-CONTROLLER-CREATES"}, tc.flags...)
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
	if code, out := runOut(t, "report", "--report-dir", dir, "--overwrite", "--claims", "000-KUBECTL-HTTP"); code != exitcode.OK {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if v, partial := verdict(); v != "not-run" || partial == "" {
		t.Errorf("judged again after an interrupt: %s, partial %q", v, partial)
	}
	if err := os.Remove(filepath.Join(dir, "claims.json")); err != nil {
		t.Fatal(err)
	}
	// An error verdict fails the command as it fails a run.
	if code, out := runOut(t, "report", "--report-dir", dir, "--overwrite", "--claims", "000-KUBECTL-HTTP"); code != exitcode.ClaimsErrored {
		t.Errorf("judged again with a claim in error: exit %d, want %d\n%s", code, exitcode.ClaimsErrored, out)
	}
	if v, partial := verdict(); v != "error" || partial != "" {
		t.Errorf("judged without a partial report: %s, partial %q", v, partial)
	}
}

// kubeproof report writes into a directory of its own (the run's with
// -judged, or --to), a whole report directory that says which run it
// judged; the run's files stay as they were, unless --overwrite.
func TestReportWritesItsOwnDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	info := &cluster.Info{Provider: "test", Name: "t", Capabilities: []cluster.Capability{cluster.AuditLog}}
	if err := info.Save(filepath.Join(dir, "cluster.json")); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	spec := types.SpecReport{ContainerHierarchyTexts: []string{"Pod creation flow"}, LeafNodeType: types.NodeTypeIt, LeafNodeText: "kubectl apply -f pod.yaml",
		LeafNodeLabels: []string{"spec:podflow-create"}, State: types.SpecStatePassed, NumAttempts: 1,
		StartTime: start, EndTime: start.Add(3 * time.Second), RunTime: 3 * time.Second}
	specs, err := json.Marshal([]types.Report{{SuiteDescription: "kubeproof", SuiteSucceeded: true, StartTime: start, EndTime: start.Add(4 * time.Second),
		SpecReports: types.SpecReports{spec}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, runner.SpecsReportName), specs, 0o644); err != nil {
		t.Fatal(err)
	}
	own := []byte("the run's own claims.md\n")
	if err := os.WriteFile(filepath.Join(dir, "claims.md"), own, 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 { // a second time writes over its own directory
		if code, out := runOut(t, "report", "--report-dir", dir, "--claims", "000-KUBECTL-HTTP"); code != exitcode.OK && code != exitcode.ClaimsErrored {
			t.Fatalf("exit %d\n%s", code, out)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "claims.md")); string(got) != string(own) {
		t.Errorf("the run's claims.md was written over: %q", got)
	}
	judged, err := report.Load(dir + "-judged")
	if err != nil {
		t.Fatal(err)
	}
	if judged.JudgedFrom != dir || judged.Run == nil || judged.Run.Seconds != 4 || judged.Kubeproof == nil || judged.Kubeproof.Version == "" {
		t.Errorf("judged report: from %q, run %+v, kubeproof %+v", judged.JudgedFrom, judged.Run, judged.Kubeproof)
	}
	for _, name := range []string{"claims.md", "claims.html", "claims-junit.xml", "junit.xml", "specs.json", "cluster.json"} {
		if _, err := os.Stat(filepath.Join(dir+"-judged", name)); err != nil {
			t.Errorf("the judged directory lacks %s", name)
		}
	}
	other := filepath.Join(t.TempDir(), "another-run")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, runner.SpecsReportName), specs, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--to", dir},                  // the run's own directory, without --overwrite
		{"--to", other},                // another run's
		{"--to", other, "--overwrite"}, // both
	} {
		if code, out := runOut(t, append([]string{"report", "--report-dir", dir}, args...)...); code != exitcode.Usage {
			t.Errorf("report %v: exit %d, want %d\n%s", args, code, exitcode.Usage, out)
		}
	}
}

// Every JSON document kubeproof writes validates against the schema it
// ships for it, here as the commands write them from a real run's report
// (ci/junit-readers/testdata/local): claims list, claims show and claims
// specs --evidence, status, report (claims.json, cluster.json), report
// merge (matrix.json), report diff; the dry run's document as its command
// prints it (the command itself, which runs the spec binary, is checked in
// internal/runner's e2e test). bench.json, faults.json and trace -o json
// need a cluster: their packages' tests validate what their writers write.
func TestEveryJSONOutputValidates(t *testing.T) {
	run := filepath.Join("..", "..", "ci", "junit-readers", "testdata", "local")
	tmp := t.TempDir()
	copied := filepath.Join(tmp, "run")
	if err := os.MkdirAll(copied, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"specs.json", "cluster.json", "claims.json"} {
		data, err := os.ReadFile(filepath.Join(run, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(copied, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	judged := filepath.Join(tmp, "judged")
	if code, out := runOut(t, "report", "--report-dir", copied, "--to", judged); code != exitcode.OK && code != exitcode.ClaimsErrored {
		t.Fatalf("report: exit %d\n%s", code, out)
	}
	for _, name := range []string{"claims.json", "cluster.json"} {
		data, err := os.ReadFile(filepath.Join(judged, name))
		if err != nil {
			t.Fatal(err)
		}
		validates(t, "report's "+name, data)
	}
	merged := filepath.Join(tmp, "merged")
	if code, out := runOut(t, "report", "merge", "--report-dir", merged, copied, judged); code != exitcode.OK {
		t.Fatalf("report merge: exit %d\n%s", code, out)
	}
	data, err := os.ReadFile(filepath.Join(merged, "matrix.json"))
	if err != nil {
		t.Fatal(err)
	}
	validates(t, "report merge's matrix.json", data)
	for _, args := range [][]string{
		{"claims", "list", "-o", "json"},
		{"claims", "show", "000-KUBECTL-HTTP", "-o", "json"},
		{"claims", "specs", "--evidence", "-o", "json", "--report-dir", judged},
		{"report", "diff", "-o", "json", copied, judged},
		{"status", "-o", "json", "--provider", "local", "--name", "kp-schema-test"},
	} {
		_, out := runOut(t, args...)
		validates(t, strings.Join(args, " "), []byte(out))
	}
	dr, _ := json.Marshal(jsonout.NewDryRun([]runner.SelectedSpec{{ID: "podflow-create", Text: "Pod creation flow", Claims: []string{"000-KUBECTL-HTTP"}}}, 54))
	validates(t, "run --dry-run -o json", dr)
	for v, what := range validated {
		t.Logf("%s: %s", v, strings.Join(what, "; "))
	}
	elsewhere := map[string]string{"kubeproof.io/bench/v1": "internal/tools/bench", "kubeproof.io/faults/v1": "internal/tools/faults", "kubeproof.io/trace/v1": "internal/tools/trace"}
	for _, o := range jsonout.Outputs {
		if len(validated[o.Version]) == 0 && elsewhere[o.Version] == "" {
			t.Errorf("%s (%s) was not validated", o.Version, o.What)
		}
	}
	// A document that is not what its schema says fails: a field of the
	// wrong type, and a field the schema does not have.
	bad := strings.Replace(string(dr), `"total": 54`, `"total": "54"`, 1)
	bad = strings.Replace(bad, `"total":54`, `"total":"54"`, 1)
	o, _ := jsonout.Find(jsonout.DryRunSchema)
	if err := jsonschema.Validate(filepath.Join("..", "..", o.File()), []byte(bad)); err == nil {
		t.Error("a dry run whose total is a string validates")
	}
	extra := strings.Replace(string(dr), `"total"`, `"surprise":1,"total"`, 1)
	if err := jsonschema.Validate(filepath.Join("..", "..", o.File()), []byte(extra)); err == nil {
		t.Error("a dry run with a field the schema lacks validates")
	}
}
