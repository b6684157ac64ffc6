package judge

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/expect"
	"github.com/kubeproof/kubeproof/contract/cluster"
)

// The claims the judge is tested on are the spec side's test catalogs:
// the same files test the catalog's loading and validation there.
func load(t *testing.T) *claims.Catalog  { return testCatalog(t, "catalog.yaml") }
func rules(t *testing.T) *claims.Catalog { return testCatalog(t, "rules.yaml") }

func testCatalog(t *testing.T, file string) *claims.Catalog {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "claims", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := claims.Load(fstest.MapFS{"doc.yaml": {Data: data}})
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

func TestClaims(t *testing.T) {
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
		got := verdicts(Claims(cat.Claims, tc.specs, tc.info))
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
	r := Claims(cat.Claims[:1], specs, info())[0]
	if r.Verdict != Refuted || !strings.Contains(r.Reason, `stored.nodeName = "node-1"`) {
		t.Fatalf("verdict %s, reason %q", r.Verdict, r.Reason)
	}
}

func TestExpectations(t *testing.T) {
	raw := func(s string) *json.RawMessage { r := json.RawMessage(s); return &r }
	f := func(x float64) *float64 { return &x }
	cases := []struct {
		e    expect.Expectation
		v    any
		want bool
	}{
		{expect.Expectation{Equals: raw(`""`)}, "", true},
		{expect.Expectation{Equals: raw(`""`)}, "n1", false},
		{expect.Expectation{Equals: raw(`201`)}, float64(201), true},
		{expect.Expectation{NotEquals: raw(`0`)}, float64(3), true},
		{expect.Expectation{OneOf: []json.RawMessage{json.RawMessage(`"update"`), json.RawMessage(`"patch"`)}}, "create", false},
		{expect.Expectation{Matches: `spec\.nodeName=(,|$)`}, "status.phase!=Succeeded", false},
		{expect.Expectation{Matches: `spec\.nodeName=(,|$)`}, "spec.nodeName=", true},
		{expect.Expectation{Contains: raw(`"Ready"`)}, []any{"Initialized", "Ready"}, true},
		{expect.Expectation{Contains: raw(`"nodeName"`)}, "spec.nodeName=x", true},
		{expect.Expectation{AtLeast: f(100), AtMost: f(500)}, float64(30), false},
		{expect.Expectation{AtLeast: f(100), AtMost: f(500)}, float64(300), true},
		{expect.Expectation{AtLeast: f(1)}, "1", false},
		{expect.Expectation{AnyMatches: raw(`"^Ready$"`)}, []any{"Initialized", "Ready"}, true},
		{expect.Expectation{AnyMatches: raw(`"^Ready$"`)}, []any{"NotReady"}, false},
		{expect.Expectation{AnyMatches: raw(`"Ready"`)}, "Ready", false},
		{expect.Expectation{AnyMatches: raw(`{"verb": "^(create|patch)$", "code": "^20[01]$"}`)}, []any{map[string]any{"verb": "get", "code": 200.0}, map[string]any{"verb": "create", "code": 201.0}}, true},
		{expect.Expectation{AnyMatches: raw(`{"verb": "^create$", "code": "^201$"}`)}, []any{map[string]any{"verb": "create", "code": 409.0}, map[string]any{"verb": "get", "code": 201.0}}, false},
		{expect.Expectation{AnyMatches: raw(`{"ok": "^true$"}`)}, []any{map[string]any{"ok": true}}, true},
		{expect.Expectation{AnyMatches: raw(`{"missing": "."}`)}, []any{map[string]any{"ok": true}}, false},
	}
	for i, tc := range cases {
		if got := holds(tc.e, tc.v); got != tc.want {
			t.Errorf("case %d (%s on %v): %t, want %t", i, tc.e.Want(), tc.v, got, tc.want)
		}
	}
	ev := map[string]any{"a": map[string]any{"b": []any{"x", map[string]any{"c": 1.0}}}}
	if v, ok := lookup(ev, "a.b.1.c"); !ok || v != 1.0 {
		t.Errorf("lookup = %v, %t", v, ok)
	}
	if _, ok := lookup(ev, "a.b.7"); ok {
		t.Error("lookup past the end of a list")
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
	if v, ok := lookup(s.Evidence, "stored.nodeName"); !ok || v != "" {
		t.Fatalf("evidence = %v", s.Evidence)
	}
	if len(s.Evidence) != 1 {
		t.Fatalf("non-evidence entries read as evidence: %v", s.Evidence)
	}
}

func judgeOne(t *testing.T, id string, specs ...SpecResult) Result {
	t.Helper()
	cat := rules(t)
	c, ok := cat.Claim(id)
	if !ok {
		t.Fatalf("no claim %s", id)
	}
	byID := map[string]SpecResult{}
	for _, s := range specs {
		byID[s.ID] = s
	}
	return Claims([]claims.Claim{c}, byID, info())[0]
}

// A spec that stopped because the scheduler never bound the Pod: the claim
// about the scheduler is refuted by what was recorded before it stopped,
// the claim about the kubelet is not checkable, naming the precondition.
func TestPreconditionPinsTheFault(t *testing.T) {
	spec := SpecResult{ID: "flow", State: "failed",
		Message:  legacyPreconditionPrefix + "the Pod was bound to a node did not happen (kube-scheduler): not bound within 30s",
		Evidence: map[string]any{"bound": map[string]any{"bound": false}}}
	if r := judgeOne(t, "X-SCHED", spec); r.Verdict != Refuted || !strings.Contains(r.Reason, "bound.bound = false") {
		t.Errorf("claim about the broken component: %s (%s)", r.Verdict, r.Reason)
	}
	r := judgeOne(t, "X-KUBELET", spec)
	if r.Verdict != NotCheckable || !strings.Contains(r.Reason, "the Pod was bound to a node did not happen (kube-scheduler)") {
		t.Errorf("claim that depends on it: %s (%s)", r.Verdict, r.Reason)
	}
}

// A spec that failed for another reason is a harness error, not a finding.
func TestFailedSpecIsAnError(t *testing.T) {
	spec := SpecResult{ID: "flow", State: "failed", Message: "unexpected error: connection reset", Evidence: map[string]any{}}
	if r := judgeOne(t, "X-KUBELET", spec); r.Verdict != Error {
		t.Errorf("%s (%s)", r.Verdict, r.Reason)
	}
}

// A conditional alternative whose evidence was not recorded cannot turn
// the claim into refuted: the condition might be the answer.
func TestMissingConditionalEvidenceIsNotCheckable(t *testing.T) {
	spec := SpecResult{ID: "flow", State: "passed", Evidence: map[string]any{"anon": map[string]any{"code": 403.0}}}
	off := SpecResult{ID: "anon-off", State: "skipped", Message: "provider kubeconfig lacks capability ControlPlaneFlags", Evidence: map[string]any{}}
	r := judgeOne(t, "X-COND", spec, off)
	if r.Verdict != NotCheckable || !strings.Contains(r.Reason, "with anonymous authentication off") || !strings.Contains(r.Reason, "ControlPlaneFlags") {
		t.Errorf("%s (%s)", r.Verdict, r.Reason)
	}
	off = SpecResult{ID: "anon-off", State: "passed", Evidence: map[string]any{"anonOff": map[string]any{"code": 403.0}}}
	if r := judgeOne(t, "X-COND", spec, off); r.Verdict != Refuted {
		t.Errorf("with the condition observed false: %s (%s)", r.Verdict, r.Reason)
	}
	off.Evidence["anonOff"] = map[string]any{"code": 401.0}
	if r := judgeOne(t, "X-COND", spec, off); r.Verdict != Conditional {
		t.Errorf("with the condition observed true: %s (%s)", r.Verdict, r.Reason)
	}
}

// Evidence a spec says it could not observe here makes the claim not
// checkable with the spec's reason.
func TestUnobservableEvidence(t *testing.T) {
	spec := SpecResult{ID: "flow", State: "passed", Evidence: map[string]any{},
		Unobservable: map[string]string{"invalidAndForbidden": "the user was allowed to create Pods"}}
	r := judgeOne(t, "X-ORDER", spec)
	if r.Verdict != NotCheckable || !strings.Contains(r.Reason, "the user was allowed to create Pods") {
		t.Errorf("%s (%s)", r.Verdict, r.Reason)
	}
}

// A timing with no samples (nothing was pulled) has no median: the claim
// is not checkable, neither refuted by a zero nor a harness error.
func TestNoSamplesIsNotCheckable(t *testing.T) {
	spec := SpecResult{ID: "flow", State: "passed", Evidence: map[string]any{"timing": map[string]any{"pullMs": map[string]any{"n": 0.0}}}}
	r := judgeOne(t, "X-TIMING", spec)
	if r.Verdict != NotCheckable || !strings.Contains(r.Reason, "took no samples of timing.pullMs") {
		t.Errorf("%s (%s)", r.Verdict, r.Reason)
	}
	spec.Evidence["timing"] = map[string]any{"pullMs": map[string]any{"n": 3.0, "median": 1200.0}}
	if r := judgeOne(t, "X-TIMING", spec); r.Verdict != Faster {
		t.Errorf("with samples: %s (%s)", r.Verdict, r.Reason)
	}
}

// A timing claim is a measurement: within, faster or slower than the
// document's number, with the median's spread beside it; never confirmed
// or refuted on its number.
func TestTimingIsMeasured(t *testing.T) {
	samples := func(median, lo, hi float64) SpecResult {
		return SpecResult{ID: "flow", State: "passed", Evidence: map[string]any{"timing": map[string]any{
			"pullMs": map[string]any{"n": 5.0, "median": median, "min": lo, "max": hi}}}}
	}
	for _, tc := range []struct {
		median float64
		want   Verdict
		reason string
	}{
		{1200, Faster, "timing.pullMs.median = 1200 (median of 5, spread 1100-4000), faster than the document's 5-30 s (taken as 5000-30000)"},
		{8000, Within, "within the document's 5-30 s"},
		{31000.4, Slower, "= 31000 (median of 5, spread 1100-4000), slower than"},
	} {
		r := judgeOne(t, "X-TIMING", samples(tc.median, 1100, 4000))
		if r.Verdict != tc.want || !strings.Contains(r.Reason, tc.reason) {
			t.Errorf("median %v: %s (%s), want %s (%s)", tc.median, r.Verdict, r.Reason, tc.want, tc.reason)
		}
		m := r.Measurement
		if m == nil || m.Value != tc.median || m.N != 5 || m.Min == nil || *m.Min != 1100 || *m.Max != 4000 || *m.Low != 5000 || *m.High != 30000 {
			t.Errorf("median %v: measurement %+v", tc.median, m)
		}
	}
	// A timing claim whose other expectation fails is refuted: that part
	// is a fact, not a number.
	spec := samples(1200, 1100, 4000)
	spec.Evidence["timing"].(map[string]any)["pulled"] = false
	if r := judgeOne(t, "X-TIMING-PULLED", spec); r.Verdict != Refuted {
		t.Errorf("a failing fact beside the number: %s (%s)", r.Verdict, r.Reason)
	}
	spec.Evidence["timing"].(map[string]any)["pulled"] = true
	if r := judgeOne(t, "X-TIMING-PULLED", spec); r.Verdict != Faster {
		t.Errorf("the fact holds, the number is below: %s (%s)", r.Verdict, r.Reason)
	}
}

// A measurement over a link (the evidence's link field) names it in its
// reason: a pull over a local veth is not one from Docker Hub.
func TestTimingNamesItsLink(t *testing.T) {
	spec := SpecResult{ID: "flow", State: "passed", Evidence: map[string]any{"timing": map[string]any{
		"link": "a veth on this machine", "pullMs": map[string]any{"n": 5.0, "median": 200.0, "min": 150.0, "max": 300.0}}}}
	r := judgeOne(t, "X-TIMING", spec)
	if r.Verdict != Faster || r.Measurement == nil || r.Measurement.Over != "a veth on this machine" ||
		!strings.Contains(r.Reason, "(median of 5, spread 150-300) over a veth on this machine, faster than") {
		t.Errorf("%s (%s), measurement %+v", r.Verdict, r.Reason, r.Measurement)
	}
	delete(spec.Evidence["timing"].(map[string]any), "link")
	if r := judgeOne(t, "X-TIMING", spec); r.Measurement.Over != "" || strings.Contains(r.Reason, " over ") {
		t.Errorf("without a link: %s", r.Reason)
	}
}

// A withinClaimed range is judged as the atLeast/atMost it stands for: "약
// 10초" is 5000-15000 ms; the result keeps the claim as written.
func TestWithinClaimed(t *testing.T) {
	samples := func(median float64) SpecResult {
		return SpecResult{ID: "flow", State: "passed", Evidence: map[string]any{"timing": map[string]any{
			"pullMs": map[string]any{"n": 3.0, "median": median, "min": median, "max": median}}}}
	}
	for _, tc := range []struct {
		median float64
		want   Verdict
	}{{4999, Faster}, {5000, Within}, {15000, Within}, {15001, Slower}} {
		r := judgeOne(t, "X-TIMING-CLAIMED", samples(tc.median))
		if r.Verdict != tc.want || !strings.Contains(r.Reason, "약 10초 (taken as 5000-15000)") {
			t.Errorf("median %v: %s (%s), want %s", tc.median, r.Verdict, r.Reason, tc.want)
		}
		if e := r.Claim.Expect[0]; e.AtLeast != nil || e.AtMost != nil || !e.WithinClaimed {
			t.Errorf("the result's claim is not as written: %+v", e)
		}
	}
}

// An open claim is open, with what check is missing, whatever ran.
func TestOpenClaim(t *testing.T) {
	r := judgeOne(t, "X-OPEN", SpecResult{ID: "flow", State: "passed"})
	if r.Verdict != Open || r.Reason != "a spec that deletes a node and watches its Pods" {
		t.Errorf("open claim: %s (%s)", r.Verdict, r.Reason)
	}
}
