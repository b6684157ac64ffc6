package judge

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/record"
)

// claimOf reads one claim as a claims file writes it.
func claimOf(t *testing.T, text string) claims.Claim {
	t.Helper()
	var c claims.Claim
	if err := yaml.UnmarshalStrict([]byte(text), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func probeResult(t *testing.T, state, evidence string) SpecResult {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(evidence), &m); err != nil {
		t.Fatal(err)
	}
	return SpecResult{ID: "p", State: state, Evidence: m, Message: "stopped"}
}

func judged(t *testing.T, claim string, s SpecResult) Result {
	t.Helper()
	c := claimOf(t, claim)
	return Claims([]claims.Claim{c}, map[string]SpecResult{s.ID: s}, info())[0]
}

const stepsRun = `{"steps":{"create":{"at":0,"took":40,"code":201},"ready":{"at":40,"took":2960,"code":0},
  "deny":{"at":3000,"took":20,"code":403,"reason":"Forbidden","message":"pods \"x\" is forbidden: violates PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false (container \"app\" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container \"app\" must set securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true (pod or container \"app\" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container \"app\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")"}},
  "pod":{"values":{"phase":["Pending","Running"]},"changes":{"phase":[{"at":10,"value":"Pending"},{"at":2900,"value":"Running"}]}}}`

// Evidence compared with evidence: both values in the reason, the
// difference a timing claim measures.
func TestEvidenceComparedWithEvidence(t *testing.T) {
	s := probeResult(t, "passed", stepsRun)
	r := judged(t, `{id: X-ORDER, section: s, quote: q, statement: st, component: c, kind: behaviour, specs: [p],
  expect: [{evidence: pod.changes.phase.1.at, after: steps.ready.at}]}`, s)
	if r.Verdict != Confirmed || !strings.Contains(r.Reason, "pod.changes.phase.1.at = 2900") {
		t.Errorf("%s (%s)", r.Verdict, r.Reason)
	}
	r = judged(t, `{id: X-ORDER, section: s, quote: q, statement: st, component: c, kind: behaviour, specs: [p],
  expect: [{evidence: pod.changes.phase.1.at, before: steps.create.at}]}`, s)
	if r.Verdict != Refuted || !strings.Contains(r.Reason, "pod.changes.phase.1.at = 2900 where the document says before (less than) steps.create.at = 0") {
		t.Errorf("%s (%s)", r.Verdict, r.Reason)
	}
	r = judged(t, `{id: X-TIME, section: s, quote: q, statement: st, component: c, kind: timing, specs: [p], claimed: "1 s",
  expect: [{evidence: pod.changes.phase.1.at, minus: steps.create.at, withinClaimed: true}]}`, s)
	if r.Verdict != Slower || r.Measurement == nil || r.Measurement.Value != 2900 || !strings.Contains(r.Reason, "pod.changes.phase.1.at − steps.create.at = 2900") {
		t.Errorf("%s (%s) %+v", r.Verdict, r.Reason, r.Measurement)
	}
	r = judged(t, `{id: X-SAME, section: s, quote: q, statement: st, component: c, kind: behaviour, specs: [p],
  expect: [{evidence: pod.changes.phase.1.at, sameAs: steps.deny.at, tolerance: 200}]}`, s)
	if r.Verdict != Confirmed {
		t.Errorf("at the same time within 200 ms: %s (%s)", r.Verdict, r.Reason)
	}
}

// A list element past the end is a refutation when the spec ended, and
// not checkable when it stopped before it could see it: never an error.
func TestMissingElement(t *testing.T) {
	claim := `{id: X-THIRD, section: s, quote: q, statement: st, component: c, kind: behaviour, specs: [p],
  expect: [{evidence: pod.values.phase.2, equals: Succeeded}]}`
	r := judged(t, claim, probeResult(t, "passed", stepsRun))
	if r.Verdict != Refuted || !strings.Contains(r.Reason, "pod.values.phase.2 is absent (pod.values.phase has 2 elements: none at 2)") {
		t.Errorf("%s (%s)", r.Verdict, r.Reason)
	}
	stopped := probeResult(t, "failed", stepsRun)
	stopped.Unmet = &record.Unmet{Component: "probe p", What: "step ready", Detail: "timed out"}
	if r := judged(t, claim, stopped); r.Verdict != NotCheckable || !strings.Contains(r.Reason, "step ready did not happen") {
		t.Errorf("stopped: %s (%s)", r.Verdict, r.Reason)
	}
	r = judged(t, `{id: X-NONE, section: s, quote: q, statement: st, component: c, kind: behaviour, specs: [p],
  expect: [{evidence: pod.values.phase.2, absent: true}, {evidence: pod.values.phase.#, equals: 2}]}`, probeResult(t, "passed", stepsRun))
	if r.Verdict != Confirmed {
		t.Errorf("absent: %s (%s)", r.Verdict, r.Reason)
	}
}

// A refusal's code is shown with who refused it and why, whole; a failed
// condition keeps its observations in the reason.
func TestReasonsKeepTheCause(t *testing.T) {
	s := probeResult(t, "passed", stepsRun)
	r := judged(t, `{id: X-AUTHZ, section: s, quote: q, statement: st, component: c, kind: status-code, specs: [p],
  expect: [{evidence: steps.deny.code, equals: 201}],
  conditional: [{condition: with the namespace's PodSecurity level privileged, expect: [{evidence: steps.deny.reason, equals: Invalid}]}]}`, s)
	for _, want := range []string{`steps.deny.code = 403 where the document says = 201 (reason: "Forbidden", message: "pods \"x\" is forbidden`,
		`\"RuntimeDefault\" or \"Localhost\")")`, `nor with the namespace's PodSecurity level privileged: steps.deny.reason = "Forbidden" where the document says = "Invalid"`} {
		if r.Verdict != Refuted || !strings.Contains(r.Reason, want) {
			t.Errorf("%s: want %s in\n%s", r.Verdict, want, r.Reason)
		}
	}
	if len(r.Observations) != 2 {
		t.Errorf("observations: %v", r.Observations)
	}
}

// A field the API server dropped from a probe's manifest is named beside
// every verdict its probe decides.
func TestDroppedFieldsAreNamed(t *testing.T) {
	s := probeResult(t, "passed", `{"steps":{"create":{"at":0,"took":40,"code":201,"dropped":["Pod web: spec.containers.0.lifecycle.stopSignal"]}}}`)
	r := judged(t, `{id: X-SIGNAL, section: s, quote: q, statement: st, component: c, kind: behaviour, specs: [p],
  expect: [{evidence: steps.create.code, equals: 201}]}`, s)
	if r.Verdict != Confirmed || !strings.Contains(r.Reason, `step create of p: ["Pod web: spec.containers.0.lifecycle.stopSignal"]`) {
		t.Errorf("%s (%s)", r.Verdict, r.Reason)
	}
}
