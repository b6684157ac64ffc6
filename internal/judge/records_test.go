package judge

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/claims/expect"
	"github.com/kubeproof/kubeproof/claims/record"
	"github.com/kubeproof/kubeproof/claims/speclink"
	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/internal/report/realrun"
)

// realRun is the real run the report tests keep
// (internal/report/testdata/local-run): its cluster, its specs'
// results and the verdicts it was judged to.
type realRun struct {
	Cluster struct {
		Capabilities []cluster.Capability `json:"capabilities"`
	} `json:"cluster"`
	Specs     []SpecResult `json:"specs"`
	Documents []struct {
		Claims []Result `json:"claims"`
	} `json:"documents"`
}

func loadRealRun(t *testing.T) realRun {
	t.Helper()
	var r realRun
	realrun.Decode(t, &r)
	return r
}

type entry struct {
	name  string
	value any
}

// specsJSON writes a Ginkgo JSON report of specs whose report entries are
// made by entries, as a spec binary would.
func specsJSON(t *testing.T, specs []SpecResult, entries func(SpecResult) []entry) string {
	t.Helper()
	var srs types.SpecReports
	for _, s := range specs {
		var state types.SpecState
		if err := json.Unmarshal([]byte(`"`+s.State+`"`), &state); err != nil {
			t.Fatal(err)
		}
		sr := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: s.Name, LeafNodeLabels: []string{speclink.SpecLabelPrefix + s.ID},
			State: state, RunTime: time.Duration(s.Seconds * float64(time.Second)), NumAttempts: s.Attempts}
		if s.Message != "" {
			sr.Failure.Message = s.Message
		}
		for _, e := range entries(s) {
			sr.ReportEntries = append(sr.ReportEntries, types.ReportEntry{Name: e.name, Value: types.WrapEntryValue(e.value)})
		}
		srs = append(srs, sr)
	}
	data, err := json.Marshal([]types.Report{{SpecReports: srs}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "specs.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// legacyEntries are the entries spec binaries wrote before typed records.
func legacyEntries(s SpecResult) []entry {
	var out []entry
	for name, v := range s.Evidence {
		out = append(out, entry{legacyEvidencePrefix + name, v})
	}
	for name, why := range s.Unobservable {
		out = append(out, entry{legacyUnobservablePrefix + name, why})
	}
	for _, n := range s.Components {
		out = append(out, entry{legacyComponentEntry, n})
	}
	if s.Dump != "" {
		out = append(out, entry{legacyFailureDumpEntry, s.Dump})
	}
	return out
}

// recordEntries are the same as typed records, as spec binaries write them
// now.
func recordEntries(s SpecResult) []entry {
	var out []entry
	add := func(r record.Record) { out = append(out, entry{record.RecordEntry, r}) }
	for name, v := range s.Evidence {
		add(record.Record{Kind: record.EvidenceRecord, Name: name, Value: v})
	}
	for name, why := range s.Unobservable {
		add(record.Record{Kind: record.UnobservableRecord, Name: name, Reason: why})
	}
	for _, n := range s.Components {
		add(record.Record{Kind: record.ComponentRecord, Component: &n})
	}
	if s.Dump != "" {
		add(record.Record{Kind: record.DumpRecord, Dump: s.Dump})
	}
	return out
}

// A real run's specs, reported as typed records or under the names used
// before them, are read as the same results and judge to the verdicts the
// run was judged to: specs.json of older runs is judged as it was.
func TestRecordsAndLegacyEntriesJudgeAlike(t *testing.T) {
	real := loadRealRun(t)
	specs := real.Specs
	if len(specs) == 0 {
		t.Fatal("the real run has no specs")
	}
	legacy, err := LoadGinkgoReport(specsJSON(t, specs, legacyEntries))
	if err != nil {
		t.Fatal(err)
	}
	typed, err := LoadGinkgoReport(specsJSON(t, specs, recordEntries))
	if err != nil {
		t.Fatal(err)
	}
	for id, s := range typed.Specs {
		if !s.typed && len(s.Evidence) > 0 {
			t.Fatalf("spec %s: its typed records were not seen as such", id)
		}
		s.typed = false // the one difference: how the spec reported
		typed.Specs[id] = s
	}
	if !reflect.DeepEqual(legacy, typed) {
		t.Fatal("typed records and legacy entries read differently")
	}
	for _, s := range specs {
		if got := typed.Specs[s.ID]; !reflect.DeepEqual(got.Evidence, s.Evidence) && len(s.Evidence) > 0 {
			t.Errorf("spec %s: evidence read as %v, recorded %v", s.ID, got.Evidence, s.Evidence)
		}
	}
	cat, err := claims.Load(fixtures.Claims())
	if err != nil {
		t.Fatal(err)
	}
	info := &cluster.Info{Provider: "local", Capabilities: real.Cluster.Capabilities}
	a, b := Claims(cat.Claims, legacy.Specs, info), Claims(cat.Claims, typed.Specs, info)
	if !reflect.DeepEqual(a, b) {
		t.Error("the same run judges differently from typed records")
	}
	recorded := map[string]Verdict{}
	for _, d := range real.Documents {
		for _, r := range d.Claims {
			recorded[r.Claim.ID] = r.Verdict
		}
	}
	// A claim that names a spec the kept run did not have, or reads
	// evidence none of its specs recorded then (both added since), cannot
	// be judged as the run judged it: the run is the reference only for
	// claims whose specs and evidence it had.
	ran := map[string]bool{}
	for _, s := range specs {
		ran[s.ID] = true
	}
	hasEvidence := func(path string) bool {
		return slices.ContainsFunc(specs, func(s SpecResult) bool {
			_, ok, _ := evidence.Find(s.Evidence, path)
			return ok
		})
	}
	newer := func(c claims.Claim) bool {
		if slices.ContainsFunc(c.Specs, func(id string) bool { return !ran[id] }) {
			return true
		}
		return slices.ContainsFunc(c.Expect, func(e expect.Expectation) bool { return !hasEvidence(e.Evidence) })
	}
	compared := 0
	for _, r := range b {
		if want, ok := recorded[r.Claim.ID]; ok && !newer(r.Claim) {
			compared++
			if r.Verdict != want {
				t.Errorf("%s: %s from the run's specs, the run said %s", r.Claim.ID, r.Verdict, want)
			}
		}
	}
	if compared < len(b)/2 {
		t.Errorf("only %d of %d claims are in the real run", compared, len(b))
	}
}

// A spec that stopped on an unmet precondition says so in a typed record;
// its claims are judged as from the failure message of older runs, and a
// record from an attempt that did not stop the spec does not count.
func TestUnmetRecord(t *testing.T) {
	u := record.Unmet{Component: "kube-scheduler", What: "the Pod was bound to a node", Detail: "not bound within 30s"}
	stopped := SpecResult{ID: "flow", Name: "flow", State: "failed", Message: u.Message(), Attempts: 1,
		Evidence: map[string]any{"bound": map[string]any{"bound": false}}}
	withRecord := func(s SpecResult) []entry {
		return append(recordEntries(s), entry{record.RecordEntry, record.Record{Kind: record.UnmetRecord, Unmet: &u, Attempt: 1}})
	}
	typed, err := LoadGinkgoReport(specsJSON(t, []SpecResult{stopped}, withRecord))
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := LoadGinkgoReport(specsJSON(t, []SpecResult{stopped}, legacyEntries))
	if err != nil {
		t.Fatal(err)
	}
	if typed.Specs["flow"].Unmet == nil {
		t.Fatal("the unmet record was not read")
	}
	for name, run := range map[string]Run{"typed": typed, "legacy": legacy} {
		what, ok := run.Specs["flow"].Precondition()
		if !ok || what != u.Missing() {
			t.Errorf("%s: precondition %q, %t; want %q", name, what, ok, u.Missing())
		}
	}
	other := stopped
	other.Message, other.Attempts = "a harness bug", 2
	run, err := LoadGinkgoReport(specsJSON(t, []SpecResult{other}, withRecord))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := run.Specs["flow"].Precondition(); ok {
		t.Error("a precondition recorded in attempt 1 stopped a spec whose attempt 2 failed otherwise")
	}
	// A spec of typed records stopped only on a record: a failure message
	// that reads like one does not count.
	run, err = LoadGinkgoReport(specsJSON(t, []SpecResult{stopped}, recordEntries))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := run.Specs["flow"].Precondition(); ok {
		t.Error("a typed spec without an unmet record was read as stopped on its failure message")
	}
}
