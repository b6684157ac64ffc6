package claims

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kubeproof/kubeproof/framework/cluster"
)

// Verdict is the judge's answer for one claim.
type Verdict string

const (
	// Confirmed: the cluster did what the document says.
	Confirmed Verdict = "confirmed"
	// Refuted: the cluster did otherwise; the observations show what.
	Refuted Verdict = "refuted"
	// Conditional: true only under a condition, which the result names.
	Conditional Verdict = "conditional"
	// NotCheckable: this cluster lacks what the check needs.
	NotCheckable Verdict = "not-checkable"
	// NotTestable: no cluster can test the sentence.
	NotTestable Verdict = "not-testable"
	// Error: the check could not run to the point of observing.
	Error Verdict = "error"
	// NotRun: none of the claim's specs ran (filtered out).
	NotRun Verdict = "not-run"

	// The verdicts of timing claims, which are measurements, not facts: a
	// document's number is a fact of its author's machine and cluster, so
	// being faster or slower than it says nothing wrong about the document
	// (and never fails a run). Within: the measured value lies in the
	// document's range; Faster: below it; Slower: above it.
	Within Verdict = "within"
	Faster Verdict = "faster"
	Slower Verdict = "slower"
)

// Verdicts in report order.
var Verdicts = []Verdict{Confirmed, Refuted, Conditional, Within, Faster, Slower, NotCheckable, NotTestable, Error, NotRun}

// Measured reports whether the verdict is one of a timing claim's
// measurements (within, faster, slower).
func (v Verdict) Measured() bool { return v == Within || v == Faster || v == Slower }

// LabelPrefix and SpecLabelPrefix are the Ginkgo label prefixes that tie
// specs to claims.
const (
	ClaimLabelPrefix = "claim:"
	SpecLabelPrefix  = "spec:"
	// EvidencePrefix names the report entries that carry evidence.
	EvidencePrefix = "evidence:"
	// UnobservablePrefix names the report entries that say why a spec
	// could not observe a piece of evidence on this cluster.
	UnobservablePrefix = "unobservable:"
	// ComponentEntry names the report entries that say what a component
	// was seen doing, or not doing within a window (ComponentNote).
	ComponentEntry = "kubeproof.component"
	// FailureDumpEntry names the report entry that points at a failed
	// spec's namespace dump.
	FailureDumpEntry = "kubeproof.failure-dump"
	// PreconditionPrefix starts the failure message of a spec that stopped
	// because something its claims depend on did not happen: the claims it
	// had not decided yet are not checkable, naming that precondition.
	PreconditionPrefix = "precondition not met: "
)

// ComponentNote is what a spec saw a cluster component do (Saw), or not
// do within its observation window.
type ComponentNote struct {
	Component string `json:"component"`
	Saw       bool   `json:"saw"`
	What      string `json:"what"`
}

// SpecResult is what one spec did in a run.
type SpecResult struct {
	ID      string  `json:"id"`
	Name    string  `json:"name"`
	State   string  `json:"state"`
	Message string  `json:"message,omitempty"`
	Seconds float64 `json:"seconds"`
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
	Components []ComponentNote `json:"components,omitempty"`
	// Entries are the spec's other report entries (the harness's own
	// timings), by name; not part of the claims report.
	Entries map[string]any `json:"-"`
}

// Precondition returns what the spec found missing when it stopped on an
// unmet precondition.
func (s SpecResult) Precondition() (string, bool) {
	return strings.CutPrefix(s.Message, PreconditionPrefix)
}

func (s SpecResult) skipped() bool { return s.State == types.SpecStateSkipped.String() }

// Failed says the spec did not pass: it failed, or stopped on an unmet
// precondition, panicked, timed out or was interrupted.
func (s SpecResult) Failed() bool {
	return s.State != types.SpecStatePassed.String() && !s.skipped() && s.State != types.SpecStatePending.String()
}

// Observation is one expectation held against the evidence.
type Observation struct {
	Evidence string `json:"evidence"`
	// Context observations explain a verdict without deciding it.
	Context  bool   `json:"context,omitempty"`
	Says     string `json:"says,omitempty"`
	Want     string `json:"want"`
	Observed any    `json:"observed"`
	Found    bool   `json:"found"`
	Holds    bool   `json:"holds"`
}

// String renders the observation for reports.
func (o Observation) String() string {
	if !o.Found {
		return fmt.Sprintf("%s: not observed (want %s)", o.Evidence, o.Want)
	}
	if o.Context {
		return fmt.Sprintf("· %s = %s", o.Evidence, Show(o.Observed))
	}
	mark := "✓"
	if !o.Holds {
		mark = "✗"
	}
	return fmt.Sprintf("%s %s = %s (want %s)", mark, o.Evidence, Show(o.Observed), o.Want)
}

// Result is a claim with its verdict and why.
type Result struct {
	Claim        Claim         `json:"claim"`
	Verdict      Verdict       `json:"verdict"`
	Reason       string        `json:"reason"`
	Condition    string        `json:"condition,omitempty"`
	Observations []Observation `json:"observations,omitempty"`
	// Specs are the claim's specs that ran; their evidence is in the
	// report's specs section, once.
	Specs []SpecRef `json:"specs,omitempty"`
	// Measurement is a timing claim's measured value beside the
	// document's number (set when the value was observed).
	Measurement *Measurement `json:"measurement,omitempty"`
}

// Measurement is what a timing claim's number was measured as here.
type Measurement struct {
	// Evidence is the path of the measured value (a median when the spec
	// took several samples).
	Evidence string `json:"evidence"`
	// Claimed is the document's number as written; Low and High the range
	// it is taken as, in the evidence's unit (milliseconds).
	Claimed string   `json:"claimed"`
	Low     *float64 `json:"low,omitempty"`
	High    *float64 `json:"high,omitempty"`
	// Value is the measured value: the median of N samples, whose spread
	// is Min to Max, when the spec sampled (N > 0); else one value.
	Value float64  `json:"value"`
	Min   *float64 `json:"min,omitempty"`
	Max   *float64 `json:"max,omitempty"`
	N     int      `json:"n,omitempty"`
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
	// Suite are the component notes recorded before any spec ran.
	Suite []ComponentNote
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
				if v, ok := strings.CutPrefix(l, SpecLabelPrefix); ok {
					id = v
				}
			}
			// A spec the run's filters left out is reported as skipped
			// without a message; it did not run, so it is not a result.
			if id == "" || (sr.State == types.SpecStateSkipped && sr.Failure.Message == "") {
				continue
			}
			res := SpecResult{ID: id, Name: sr.FullText(), State: sr.State.String(), Seconds: sr.RunTime.Seconds(),
				Attempts: sr.NumAttempts, Flaky: sr.State == types.SpecStatePassed && sr.NumAttempts > 1}
			if sr.State != types.SpecStatePassed {
				res.Message = firstLine(sr.Failure.Message)
			}
			run.Specs[id] = readEntries(sr, &res)
		}
	}
	return run, nil
}

// readEntries sorts a spec's report entries into evidence, component notes
// and the harness's own entries.
func readEntries(sr types.SpecReport, res *SpecResult) SpecResult {
	if res == nil {
		res = &SpecResult{}
	}
	res.Evidence = map[string]any{}
	for _, e := range sr.ReportEntries {
		if e.Name == FailureDumpEntry {
			_ = json.Unmarshal([]byte(e.Value.AsJSON), &res.Dump)
			continue
		}
		if e.Name == ComponentEntry {
			var n ComponentNote
			if json.Unmarshal([]byte(e.Value.AsJSON), &n) == nil {
				res.Components = append(res.Components, n)
			}
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(e.Value.AsJSON), &v); err != nil {
			v = e.Value.Representation
		}
		if name, ok := strings.CutPrefix(e.Name, EvidencePrefix); ok {
			res.Evidence[name] = v
			continue
		}
		if name, ok := strings.CutPrefix(e.Name, UnobservablePrefix); ok {
			if res.Unobservable == nil {
				res.Unobservable = map[string]string{}
			}
			res.Unobservable[name], _ = v.(string)
			continue
		}
		if res.Entries == nil {
			res.Entries = map[string]any{}
		}
		res.Entries[e.Name] = v
	}
	return *res
}

// Judge gives every claim its verdict from the specs' results on the cluster
// described by info.
func Judge(claims []Claim, specs map[string]SpecResult, info *cluster.Info) []Result {
	out := make([]Result, 0, len(claims))
	for _, c := range claims {
		out = append(out, judge(c, specs, info))
	}
	return out
}

func judge(c Claim, specs map[string]SpecResult, info *cluster.Info) Result {
	r := judgeFacts(c, specs, info)
	if c.Kind == Timing {
		r = measured(r, specs)
	}
	return r
}

// judgeFacts holds a claim's expectations against the evidence.
func judgeFacts(c Claim, specs map[string]SpecResult, info *cluster.Info) Result {
	r := Result{Claim: c}
	if !c.Testable() {
		r.Verdict, r.Reason = NotTestable, c.NotTestable
		return r
	}
	var ran []SpecResult
	for _, id := range c.Specs {
		if s, ok := specs[id]; ok {
			ran = append(ran, s)
			r.Specs = append(r.Specs, SpecRef{ID: s.ID, State: s.State, Message: s.Message, Seconds: s.Seconds})
		}
	}
	for _, capability := range c.Requires {
		if info != nil && !info.Has(capability) {
			r.Verdict, r.Reason = NotCheckable, info.Missing(capability)
			return r
		}
	}
	if len(ran) == 0 {
		r.Verdict, r.Reason = NotRun, "none of its specs ran in this run ("+strings.Join(c.Specs, ", ")+")"
		return r
	}
	allSkipped := true
	for _, s := range ran {
		allSkipped = allSkipped && s.skipped()
	}
	if allSkipped {
		r.Verdict, r.Reason = NotCheckable, "skipped: "+ran[0].Message
		return r
	}

	obs, missing := evaluate(c.Expect, ran)
	r.Observations = append(obs, explain(c.Context, ran)...)
	if len(failing(obs)) == 0 {
		if missing != "" {
			r.Verdict, r.Reason = missingVerdict(c, missing, ran, specs)
			return r
		}
		r.Verdict, r.Reason = Confirmed, "observed "+joinObs(obs, true)
		return r
	}
	// What was observed contradicts the claim (even if a spec stopped
	// before it observed the rest). Does it hold under a condition?
	for _, alt := range c.Conditional {
		altObs, altMissing := evaluate(alt.Expect, ran)
		switch {
		case altMissing == "" && allHold(altObs):
			r.Verdict, r.Condition = Conditional, alt.Condition
			r.Reason = fmt.Sprintf("holds only %s: %s; in general %s", alt.Condition, joinObs(altObs, true), joinObs(obs, false))
			r.Observations = append(r.Observations, altObs...)
			return r
		case altMissing != "" && len(failing(altObs)) == 0:
			// The condition could be the answer, but it was not observed:
			// the claim cannot be called refuted.
			v, why := missingVerdict(c, altMissing, ran, specs)
			if v == Error {
				r.Verdict, r.Reason = Error, why
				return r
			}
			r.Verdict = NotCheckable
			r.Reason = fmt.Sprintf("in general %s; whether it holds %s was not observed: %s", joinObs(obs, false), alt.Condition, why)
			return r
		}
	}
	r.Verdict, r.Reason = Refuted, "the cluster did otherwise: "+joinObs(obs, false)
	return r
}

// measured turns a timing claim's verdict into a measurement: confirmed
// is within the document's range; refuted, when only its ranges failed,
// faster or slower than it. A timing claim refuted by another kind of
// expectation stays refuted: that is a fact, not a number.
func measured(r Result, specs map[string]SpecResult) Result {
	var rangeObs *Observation
	var rangeExp Expectation
	for i, e := range r.Claim.Expect {
		if e.AtLeast == nil && e.AtMost == nil {
			continue
		}
		if i < len(r.Observations) && r.Observations[i].Found {
			rangeObs, rangeExp = &r.Observations[i], e
		}
		break
	}
	if rangeObs == nil {
		return r
	}
	value, ok := toFloat(rangeObs.Observed)
	if !ok {
		return r
	}
	m := &Measurement{Evidence: rangeExp.Evidence, Claimed: r.Claim.Claimed, Low: rangeExp.AtLeast, High: rangeExp.AtMost, Value: value}
	// A median's siblings are its spread: framework.Samples records
	// median, min, max and n side by side.
	if parent, field, ok := cutLast(rangeExp.Evidence); ok && field == "median" {
		for _, s := range specs {
			if !slices.Contains(r.Claim.Specs, s.ID) {
				continue
			}
			if n, ok := Lookup(s.Evidence, parent+".n"); ok {
				f, _ := toFloat(n)
				m.N = int(f)
				if v, ok := Lookup(s.Evidence, parent+".min"); ok {
					if f, ok := toFloat(v); ok {
						m.Min = &f
					}
				}
				if v, ok := Lookup(s.Evidence, parent+".max"); ok {
					if f, ok := toFloat(v); ok {
						m.Max = &f
					}
				}
				break
			}
		}
	}
	r.Measurement = m
	switch r.Verdict {
	case Confirmed:
		r.Verdict, r.Reason = Within, "measured "+m.String()+", within the document's "+m.documented()
	case Refuted:
		for _, o := range failing(r.Observations) {
			if o.Evidence != rangeExp.Evidence || o.Want != rangeExp.Want() {
				return r // another expectation failed: a fact, not a measurement
			}
		}
		if rangeExp.AtLeast != nil && value < *rangeExp.AtLeast {
			r.Verdict, r.Reason = Faster, "measured "+m.String()+", faster than the document's "+m.documented()
		} else {
			r.Verdict, r.Reason = Slower, "measured "+m.String()+", slower than the document's "+m.documented()
		}
	}
	return r
}

// String is the measured value with its spread.
func (m Measurement) String() string {
	s := fmt.Sprintf("%s = %s", m.Evidence, short(m.Value))
	if m.N > 0 {
		s = fmt.Sprintf("%s = %s (median of %d", m.Evidence, short(m.Value), m.N)
		if m.Min != nil && m.Max != nil {
			s += fmt.Sprintf(", spread %s-%s", short(*m.Min), short(*m.Max))
		}
		s += ")"
	}
	return s
}

// short rounds a measured value for reading: a measurement's last digits
// are noise.
func short(f float64) string {
	switch a := math.Abs(f); {
	case a >= 100:
		return num(math.Round(f))
	case a >= 1:
		return num(math.Round(f*10) / 10)
	}
	return num(math.Round(f*100) / 100)
}

// toFloat reads a number decoded from JSON.
func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// documented is the document's number and the range it is taken as.
func (m Measurement) documented() string {
	var rng string
	switch {
	case m.Low != nil && m.High != nil:
		rng = num(*m.Low) + "-" + num(*m.High)
	case m.Low != nil:
		rng = "≥ " + num(*m.Low)
	case m.High != nil:
		rng = "≤ " + num(*m.High)
	}
	if m.Claimed == "" {
		return rng
	}
	return fmt.Sprintf("%s (taken as %s)", m.Claimed, rng)
}

// missingVerdict explains evidence no spec recorded: its spec did not run
// in this run, skipped, stopped on an unmet precondition, or failed.
func missingVerdict(c Claim, missing string, ran []SpecResult, specs map[string]SpecResult) (Verdict, string) {
	if absent := notRan(c.Specs, specs); len(absent) > 0 {
		return NotRun, fmt.Sprintf("evidence %s comes from spec %s, which did not run in this run", missing, strings.Join(absent, ", "))
	}
	return missingEvidence(missing, ran)
}

// failing returns the observations that were made and contradict the claim.
func failing(obs []Observation) []Observation {
	var out []Observation
	for _, o := range obs {
		if o.Found && !o.Holds {
			out = append(out, o)
		}
	}
	return out
}

// evaluate holds expectations against the specs' evidence. missing names
// the first evidence no spec recorded.
func evaluate(exps []Expectation, specs []SpecResult) ([]Observation, string) {
	var obs []Observation
	missing := ""
	for _, e := range exps {
		o := Observation{Evidence: e.Evidence, Says: e.Says, Want: e.Want()}
		for _, s := range specs {
			if e.Spec != "" && s.ID != e.Spec {
				continue
			}
			if v, ok := Lookup(s.Evidence, e.Evidence); ok {
				o.Observed, o.Found, o.Holds = v, true, e.Holds(v)
				break
			}
		}
		if !o.Found && missing == "" {
			missing = e.Evidence
		}
		obs = append(obs, o)
	}
	return obs, missing
}

// notRan lists the named specs that have no result.
func notRan(ids []string, specs map[string]SpecResult) []string {
	var out []string
	for _, id := range ids {
		if _, ok := specs[id]; !ok {
			out = append(out, id)
		}
	}
	return out
}

// explain reads the evidence a claim shows for explanation only.
func explain(paths []string, specs []SpecResult) []Observation {
	var obs []Observation
	for _, p := range paths {
		o := Observation{Evidence: p, Context: true, Want: "(context)", Holds: true}
		for _, s := range specs {
			if v, ok := Lookup(s.Evidence, p); ok {
				o.Observed, o.Found = v, true
				break
			}
		}
		if o.Found {
			obs = append(obs, o)
		}
	}
	return obs
}

// missingEvidence explains evidence no spec recorded: a spec that skipped
// (the cluster cannot do what it needs), failed (a harness bug), stopped
// because something the claim depends on did not happen, or a harness bug.
func missingEvidence(evidence string, specs []SpecResult) (Verdict, string) {
	name, _, _ := strings.Cut(evidence, ".")
	for _, s := range specs {
		if why, ok := s.Unobservable[name]; ok {
			return NotCheckable, fmt.Sprintf("not checkable here: spec %s could not observe %s: %s", s.ID, name, why)
		}
	}
	for _, s := range specs {
		if s.skipped() {
			return NotCheckable, fmt.Sprintf("spec %s, which observes %s, skipped: %s", s.ID, evidence, s.Message)
		}
	}
	for _, s := range specs {
		if _, unmet := s.Precondition(); s.Failed() && !unmet {
			return Error, fmt.Sprintf("spec %s %s before it observed %s: %s", s.ID, s.State, evidence, s.Message)
		}
	}
	for _, s := range specs {
		if what, unmet := s.Precondition(); s.Failed() && unmet {
			return NotCheckable, fmt.Sprintf("not checkable here, because %s (spec %s stopped before it observed %s)", what, s.ID, evidence)
		}
	}
	// A summary of samples (framework.Samples) has no median when nothing
	// was sampled: the spec looked, and there was nothing to measure.
	if parent, _, ok := cutLast(evidence); ok {
		for _, s := range specs {
			if n, ok := Lookup(s.Evidence, parent+".n"); ok && fmt.Sprint(n) == "0" {
				return NotCheckable, fmt.Sprintf("not checkable here: spec %s took no samples of %s (%s.n = 0)", s.ID, parent, parent)
			}
		}
	}
	return Error, fmt.Sprintf("no spec recorded the evidence %s (a harness bug)", evidence)
}

func allHold(obs []Observation) bool {
	for _, o := range obs {
		if !o.Holds {
			return false
		}
	}
	return true
}

// joinObs renders the observations that hold (or those that do not).
func joinObs(obs []Observation, holding bool) string {
	var parts []string
	seen := map[string]bool{}
	for _, o := range obs {
		if o.Holds != holding || o.Context || !o.Found || (holding && seen[o.Evidence]) {
			continue
		}
		seen[o.Evidence] = true
		s := fmt.Sprintf("%s = %s", o.Evidence, Show(o.Observed))
		if !holding {
			want := o.Want
			if o.Says != "" {
				want = o.Says + ", i.e. " + o.Want
			}
			s += " where the document says " + want
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// Interrupted rewrites the verdicts of an interrupted run: a claim whose
// specs did not run, or were stopped before they observed its evidence, is
// not run because of the interruption (not an error, not a finding).
func Interrupted(rs []Result) []Result {
	out := make([]Result, len(rs))
	for i, r := range rs {
		if r.Verdict == NotRun || r.Verdict == Error {
			for _, s := range r.Specs {
				if s.State == types.SpecStateInterrupted.String() || s.State == types.SpecStateAborted.String() || r.Verdict == NotRun {
					r.Verdict, r.Reason = NotRun, "not run: the run was interrupted before this claim was observed ("+r.Reason+")"
					break
				}
			}
			if len(r.Specs) == 0 {
				r.Verdict, r.Reason = NotRun, "not run: the run was interrupted before its specs ran"
			}
		}
		out[i] = r
	}
	return out
}

// Summary counts verdicts.
type Summary map[Verdict]int

// Summarize counts the results' verdicts.
func Summarize(rs []Result) Summary {
	s := Summary{}
	for _, r := range rs {
		s[r.Verdict]++
	}
	return s
}

// cutLast splits a dotted evidence path at its last dot.
func cutLast(path string) (parent, field string, ok bool) {
	i := strings.LastIndex(path, ".")
	if i < 0 {
		return "", "", false
	}
	return path[:i], path[i+1:], true
}
