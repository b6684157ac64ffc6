package claims

import (
	"reflect"
	"strings"
	"testing"
)

func rules(t *testing.T) *Catalog { return testCatalog(t, "rules.yaml") }

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
	return Judge([]Claim{c}, byID, info())[0]
}

// A spec that stopped because the scheduler never bound the Pod: the claim
// about the scheduler is refuted by what was recorded before it stopped,
// the claim about the kubelet is not checkable, naming the precondition.
func TestPreconditionPinsTheFault(t *testing.T) {
	spec := SpecResult{ID: "flow", State: "failed",
		Message:  PreconditionPrefix + "the Pod was bound to a node did not happen (kube-scheduler): not bound within 30s",
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

type boundEv struct {
	Bound bool `json:"bound"`
}

type runningEv struct {
	Running bool `json:"running"`
}

type who struct {
	Username string   `json:"username"`
	Groups   []string `json:"groups"`
}

type tokenEv struct {
	JWTParts int `json:"jwtParts"`
	who
	Extra map[string]who `json:"extra"`
	Raw   any            `json:"raw"`
}

func decls(pairs ...any) []EvidenceDecl {
	var out []EvidenceDecl
	for i := 0; i < len(pairs); i += 3 {
		out = append(out, EvidenceDecl{Spec: pairs[i].(string), Name: pairs[i+1].(string), Type: reflect.TypeOf(pairs[i+2])})
	}
	return out
}

// The catalog test's rule: a claim may only name evidence paths its specs
// declare, with values the declared type can take.
func TestCheckEvidence(t *testing.T) {
	cat := rules(t)
	all := decls("flow", "bound", boundEv{}, "flow", "binding", map[string]string{}, "flow", "running", runningEv{},
		"flow", "anon", struct {
			Code int `json:"code"`
		}{}, "anon-off", "anonOff", struct {
			Code int `json:"code"`
		}{}, "flow", "invalidAndForbidden", struct {
			Code int `json:"code"`
		}{}, "flow", "timing", struct {
			Pulled bool `json:"pulled"`
			PullMs struct {
				Median *float64 `json:"median,omitempty"`
				N      int      `json:"n"`
			} `json:"pullMs"`
		}{})
	if errs := CheckEvidence(cat, all); len(errs) != 0 {
		t.Fatalf("declared evidence reported: %v", errs)
	}
	// X-KUBELET names running.running, but running is declared without it;
	// X-COND's condition needs anonOff, declared as a string.
	broken := decls("flow", "bound", boundEv{}, "flow", "binding", map[string]string{}, "flow", "running", who{},
		"flow", "anon", struct {
			Code int `json:"code"`
		}{}, "anon-off", "anonOff", "", "flow", "invalidAndForbidden", struct {
			Code string `json:"code"`
		}{})
	text := ""
	for _, err := range CheckEvidence(cat, broken) {
		text += err.Error() + "\n"
	}
	for _, want := range []string{
		`claim X-KUBELET: evidence running.running: flow: running has no field "running"`,
		"claim X-COND: evidence anonOff.code: anon-off: anonOff is a string",
		"claim X-ORDER: evidence invalidAndForbidden.code: flow: = 403 wants a number, but the spec records a string",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("CheckEvidence did not report %q:\n%s", want, text)
		}
	}
}

func TestResolveAndPaths(t *testing.T) {
	tt := reflect.TypeOf(tokenEv{})
	for path, kind := range map[string]reflect.Kind{
		"t.jwtParts": reflect.Int, "t.username": reflect.String, "t.groups": reflect.Slice, "t.groups.0": reflect.String,
		"t.extra.anything.username": reflect.String,
	} {
		got, err := Resolve(tt, path)
		if err != nil || got.Kind() != kind {
			t.Errorf("Resolve(%s) = %v, %v; want a %s", path, got, err, kind)
		}
	}
	if _, err := Resolve(tt, "t.raw.deeper"); err == nil || !strings.Contains(err.Error(), "untyped") {
		t.Errorf("a path below an untyped field must not pass: %v", err)
	}
	paths := strings.Join(Paths("t", tt), " ")
	for _, want := range []string{"t.jwtParts", "t.username", "t.extra.{key}.username"} {
		if !strings.Contains(paths, want) {
			t.Errorf("Paths lacks %s: %s", want, paths)
		}
	}
}
