package judge

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kubeproof/kubeproof/claims/record"
	"github.com/kubeproof/kubeproof/claims/speclink"
)

// SpecResult is what one spec did in a run.
type SpecResult struct {
	ID      string  `json:"id"`
	Name    string  `json:"name"`
	State   string  `json:"state"`
	Message string  `json:"message,omitempty"`
	Seconds float64 `json:"seconds"`
	// StartedAt and EndedAt are when the spec ran (Ginkgo's clock), so that
	// reports can share the run's wall time among specs that ran at once.
	StartedAt time.Time `json:"startedAt,omitzero"`
	EndedAt   time.Time `json:"endedAt,omitzero"`
	// Attempts is how often the spec ran (more than once with
	// --flake-attempts); Flaky: it passed, but not at its first attempt.
	Attempts int  `json:"attempts,omitempty"`
	Flaky    bool `json:"flaky,omitempty"`
	// Evidence maps evidence names to the values the spec recorded.
	Evidence map[string]any `json:"evidence,omitempty"`
	// Unobservable says, by evidence name, why the spec could not observe
	// it on this cluster.
	Unobservable map[string]string `json:"unobservable,omitempty"`
	// Dump is the file a failed spec's namespace was dumped to.
	Dump string `json:"dump,omitempty"`
	// Components are what the spec saw components do (or not do).
	Components []record.ComponentNote `json:"components,omitempty"`
	// Unmet is the precondition the spec stopped on, as it recorded it.
	Unmet *record.Unmet `json:"-"`
	// unmetAttempt is the attempt Unmet was recorded in.
	unmetAttempt int
	// typed says the spec reported typed records (record.Record): then
	// its failure message is not read for a precondition.
	typed bool
	// Entries are the spec's other report entries (the harness's own
	// timings), by name; not part of the claims report.
	Entries map[string]any `json:"-"`
}

// Precondition returns what the spec found missing when it stopped on an
// unmet precondition.
func (s SpecResult) Precondition() (string, bool) {
	if s.Unmet != nil {
		return firstLine(s.Unmet.Missing()), true
	}
	if s.typed {
		return "", false
	}
	// A run from before typed records says it only in the failure message.
	return strings.CutPrefix(s.Message, legacyPreconditionPrefix)
}

func (s SpecResult) skipped() bool { return s.State == types.SpecStateSkipped.String() }

// Failed says the spec did not pass: it failed, or stopped on an unmet
// precondition, panicked, timed out or was interrupted.
func (s SpecResult) Failed() bool {
	return s.State != types.SpecStatePassed.String() && !s.skipped() && s.State != types.SpecStatePending.String()
}

// SpecRef is a spec's outcome without its evidence.
type SpecRef struct {
	ID      string  `json:"id"`
	State   string  `json:"state"`
	Message string  `json:"message,omitempty"`
	Seconds float64 `json:"seconds"`
}

// Run is what a run of the specs left: each claim spec's result, and what
// the suite's own checks before the specs (the canary) saw components do.
type Run struct {
	Specs map[string]SpecResult
	// Start and End are the suite's wall clock: the first spec process's
	// start and the last one's end (zero when unknown).
	Start, End time.Time
	// Suite are the component notes recorded before any spec ran.
	Suite []record.ComponentNote
}

// LoadGinkgoReport reads a Ginkgo JSON report: the result of every spec that
// carries a spec:<id> label, by ID, and the suite's component notes.
func LoadGinkgoReport(path string) (Run, error) {
	run := Run{Specs: map[string]SpecResult{}}
	data, err := os.ReadFile(path)
	if err != nil {
		return run, fmt.Errorf("read spec report: %w", err)
	}
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil {
		return run, fmt.Errorf("parse spec report %s: %w", path, err)
	}
	for _, r := range reports {
		if !r.StartTime.IsZero() && (run.Start.IsZero() || r.StartTime.Before(run.Start)) {
			run.Start = r.StartTime
		}
		if r.EndTime.After(run.End) {
			run.End = r.EndTime
		}
		for _, sr := range r.SpecReports {
			if sr.LeafNodeType == types.NodeTypeSynchronizedBeforeSuite || sr.LeafNodeType == types.NodeTypeBeforeSuite {
				run.Suite = append(run.Suite, readEntries(sr, nil).Components...)
				continue
			}
			if sr.LeafNodeType != types.NodeTypeIt {
				continue
			}
			id := ""
			for _, l := range sr.Labels() {
				if v, ok := strings.CutPrefix(l, speclink.SpecLabelPrefix); ok {
					id = v
				}
			}
			// A spec the run's filters left out is reported as skipped
			// without a message; it did not run, so it is not a result.
			if id == "" || (sr.State == types.SpecStateSkipped && sr.Failure.Message == "") {
				continue
			}
			res := SpecResult{ID: id, Name: sr.FullText(), State: sr.State.String(), Seconds: sr.RunTime.Seconds(),
				StartedAt: sr.StartTime, EndedAt: sr.EndTime,
				Attempts: sr.NumAttempts, Flaky: sr.State == types.SpecStatePassed && sr.NumAttempts > 1}
			if sr.State != types.SpecStatePassed {
				res.Message = firstLine(sr.Failure.Message)
			}
			run.Specs[id] = readEntries(sr, &res)
		}
	}
	return run, nil
}

// The names under which specs reported to the judge before typed records
// (record.Record): specs.json of older runs still carries them, and
// `kubeproof report` judges those runs again.
const (
	legacyEvidencePrefix     = "evidence:"
	legacyUnobservablePrefix = "unobservable:"
	legacyComponentEntry     = "kubeproof.component"
	legacyFailureDumpEntry   = "kubeproof.failure-dump"
	legacyPreconditionPrefix = "precondition not met: "
)

// readEntries sorts a spec's report entries into evidence, component notes
// and the harness's own entries.
func readEntries(sr types.SpecReport, res *SpecResult) SpecResult {
	if res == nil {
		res = &SpecResult{}
	}
	res.Evidence = map[string]any{}
	for _, e := range sr.ReportEntries {
		if e.Name == record.RecordEntry {
			var r record.Record
			if err := json.Unmarshal([]byte(e.Value.AsJSON), &r); err == nil {
				res.typed = true
				res.add(r)
			}
			continue
		}
		if e.Name == legacyFailureDumpEntry {
			_ = json.Unmarshal([]byte(e.Value.AsJSON), &res.Dump)
			continue
		}
		if e.Name == legacyComponentEntry {
			var n record.ComponentNote
			if json.Unmarshal([]byte(e.Value.AsJSON), &n) == nil {
				res.Components = append(res.Components, n)
			}
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(e.Value.AsJSON), &v); err != nil {
			v = e.Value.Representation
		}
		if name, ok := strings.CutPrefix(e.Name, legacyEvidencePrefix); ok {
			res.Evidence[name] = v
			continue
		}
		if name, ok := strings.CutPrefix(e.Name, legacyUnobservablePrefix); ok {
			reason, _ := v.(string)
			res.add(record.Record{Kind: record.UnobservableRecord, Name: name, Reason: reason})
			continue
		}
		if res.Entries == nil {
			res.Entries = map[string]any{}
		}
		res.Entries[e.Name] = v
	}
	// A precondition recorded in an attempt that is not the one reported
	// (--flake-attempts) did not stop the spec.
	if res.Unmet != nil && (sr.State == types.SpecStatePassed || res.unmetAttempt != sr.NumAttempts) {
		res.Unmet = nil
	}
	return *res
}

// add files a record where the judge reads it.
func (res *SpecResult) add(r record.Record) {
	switch r.Kind {
	case record.EvidenceRecord:
		res.Evidence[r.Name] = r.Value
	case record.UnobservableRecord:
		if res.Unobservable == nil {
			res.Unobservable = map[string]string{}
		}
		res.Unobservable[r.Name] = r.Reason
	case record.ComponentRecord:
		if r.Component != nil {
			res.Components = append(res.Components, *r.Component)
		}
	case record.UnmetRecord:
		res.Unmet, res.unmetAttempt = r.Unmet, r.Attempt
	case record.DumpRecord:
		res.Dump = r.Dump
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
