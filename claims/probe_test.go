package claims

import (
	"strings"
	"testing"
)

const probeFile = `apiVersion: kubeproof.io/v1alpha1
kind: Claims
document: {file: doc.md, title: Doc}
probes:
- id: p-one
  description: a Pod and its history
  observe:
  - name: pod
    object: {apiVersion: v1, kind: Pod, name: web, fields: {phase: "{.status.phase}", restarts: "{.status.containerStatuses[0].restartCount}"}}
  - name: api
    audit: {resource: pods}
  steps:
  - apply: {manifest: "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n"}
  - name: running
    wait: {observer: pod, field: phase, condition: {equals: Running}}
claims:
- id: DOC-RUNNING
  section: s
  quote: q
  statement: st
  component: kubelet
  kind: behaviour
  specs: [p-one]
  requires: [AuditLog]
  expect:
  - {evidence: pod.values.phase, contains: Running}
  - {evidence: pod.intervals.restarts.1, atLeast: 1000}
  - {evidence: steps.running.took, atMost: 60000}
  - {evidence: api.codes.0, equals: 201}
`

func loadProbeFile(t *testing.T, text string) *Catalog {
	t.Helper()
	cat := &Catalog{}
	if err := cat.add("doc.yaml", "doc.yaml", "/abs/doc.yaml", []byte(text)); err != nil {
		t.Fatal(err)
	}
	return cat
}

func TestProbeEvidenceIsTyped(t *testing.T) {
	cat := loadProbeFile(t, probeFile)
	if err := cat.Validate(); err != nil {
		t.Fatal(err)
	}
	if errs := CheckEvidence(cat, cat.ProbeEvidence()); len(errs) > 0 {
		t.Fatalf("paths through the observers' types: %v", errs)
	}
	if errs := CheckProbeNeeds(cat); len(errs) > 0 {
		t.Fatalf("needs: %v", errs)
	}
	if got := cat.ProbeFiles(); len(got) != 1 || got[0] != "/abs/doc.yaml" {
		t.Fatalf("probe files %v", got)
	}
	for path, want := range map[string]string{
		"pod.last.phse":       `has no field "phse" (it has phase, restarts)`,
		"steps.rnning.took":   `has no field "rnning" (it has running, step1)`,
		"api.entries.0.verbb": `has no field "verbb"`,
	} {
		bad := strings.Replace(probeFile, "pod.values.phase, contains: Running", path+", equals: 1", 1)
		cat := loadProbeFile(t, bad)
		errs := CheckEvidence(cat, cat.ProbeEvidence())
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), want) {
			t.Errorf("%s: got %v, want one error with %q", path, errs, want)
		}
	}
}

func TestProbeNeedsCapability(t *testing.T) {
	cat := loadProbeFile(t, strings.Replace(probeFile, "  requires: [AuditLog]\n", "", 1))
	errs := CheckProbeNeeds(cat)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "needs capability AuditLog") {
		t.Fatalf("got %v", errs)
	}
}

func TestProbeValidation(t *testing.T) {
	for name, tc := range map[string]struct{ from, to, want string }{
		"wait on no observer":  {"observer: pod, field: phase", "observer: nope, field: phase", `wait names "nope"`},
		"wait on no field":     {"observer: pod, field: phase", "observer: pod, field: phasee", `has no field "phasee"`},
		"two actions":          {"- name: running\n", "- name: running\n    delete: {apiVersion: v1, kind: Pod, name: web}\n", "give exactly one of"},
		"bad jsonpath":         {`phase: "{.status.phase}"`, `phase: ".status.phase"`, "not a JSONPath in braces"},
		"unknown capability":   {"requires: [AuditLog]", "requires: [AuditLogs]", `"AuditLogs", which is not a capability`},
		"start before stop":    {"- name: running\n", "- startComponent: kube-scheduler\n  - name: running\n", "which no step before it stops"},
		"unknown component":    {"- name: running\n", "- stopComponent: kubelet\n  - name: running\n", `"kubelet" is not a component`},
		"bad timeout":          {"condition: {equals: Running}}", "condition: {equals: Running}, timeout: soon}", `timeout "soon"`},
		"step name with a dot": {"- name: running", "- name: run.ning", "a name is letters"},
	} {
		cat := loadProbeFile(t, strings.Replace(probeFile, tc.from, tc.to, 1))
		err := cat.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", name, err, tc.want)
		}
	}
}

// An observer takes exactly one kind of observer.Kinds; a field its kind
// does not have, or a kind that does not exist, is refused at its line.
func TestObserverKinds(t *testing.T) {
	cat := loadProbeFile(t, strings.Replace(probeFile, "    audit: {resource: pods}\n", "    audit: {resource: pods}\n    events: {kind: Pod, name: web}\n", 1))
	if err := cat.Validate(); err == nil || !strings.Contains(err.Error(), "observer api: give exactly one of object, events, audit") {
		t.Errorf("two kinds: %v", err)
	}
	for name, tc := range map[string]struct{ from, to, want string }{
		"field of no kind": {"    audit: {resource: pods}\n", "    audit:\n      resource: pods\n      pod: web\n", `doc.yaml:13: unknown field "pod"`},
		"no such kind":     {"    audit: {resource: pods}\n", "    logs: {pod: web}\n", `doc.yaml:11: unknown field "logs"`},
	} {
		err := (&Catalog{}).add("doc.yaml", "doc.yaml", "", []byte(strings.Replace(probeFile, tc.from, tc.to, 1)))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %s", name, err, tc.want)
		}
	}
}
