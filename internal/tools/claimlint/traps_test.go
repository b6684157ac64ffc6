package claimlint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/claims"
)

const trapFile = `apiVersion: kubeproof.io/v1alpha1
kind: Claims
document: {file: d.md, title: D}
probes:
- id: trap-probe
  description: traps
  observe:
  - name: pod
    object:
      apiVersion: v1
      kind: Pod
      name: web
      fields:
        restarts: "{.status.containerStatuses[0].restartCount}"
        phase: "{.status.phase}"
        appExit: "{.status.containerStatuses[0].state.terminated.finishedAt}"
        sideExit: "{.status.containerStatuses[1].state.terminated.finishedAt}"
  steps:
  - name: create
    apply: {manifest: "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n"}
  - name: running
    wait: {observer: pod, field: restarts, condition: {atLeast: 0}}
  - name: delete
    delete: {apiVersion: v1, kind: Pod, name: web}
  - name: gone
    wait: {observer: pod, deleted: true}
  - name: gone-since
    wait: {observer: pod, deleted: true, since: delete}
claims:
- {id: T-WAIT, section: s, quote: q, statement: st, component: c, kind: behaviour, specs: [trap-probe],
   expect: [{evidence: steps.gone.took, atMost: 30000}]}
- {id: T-WAIT-SINCE, section: s, quote: q, statement: st, component: c, kind: behaviour, specs: [trap-probe],
   expect: [{evidence: steps.gone-since.took, atMost: 30000}]}
- {id: T-ORDER, section: s, quote: q, statement: st, component: c, kind: behaviour, specs: [trap-probe],
   expect: [{evidence: pod.changes.appExit.1.at, before: pod.changes.sideExit.1.at}]}
- {id: T-JITTER, section: s, quote: q, statement: st, component: c, kind: behaviour, specs: [trap-probe],
   expect: [{evidence: pod.intervals.restarts.1, atLeast: 20000, atMost: 25000}]}
- {id: T-WIDE, section: s, quote: q, statement: st, component: c, kind: behaviour, specs: [trap-probe],
   expect: [{evidence: pod.intervals.restarts.1, atLeast: 20000, atMost: 40000}]}
- {id: T-FIRST, section: s, quote: q, statement: st, component: c, kind: behaviour, specs: [trap-probe],
   expect: [{evidence: pod.first.restarts, equals: 0}]}
- {id: T-FIRST-PHASE, section: s, quote: q, statement: st, component: c, kind: behaviour, specs: [trap-probe],
   expect: [{evidence: pod.first.phase, equals: Pending}, {evidence: pod.values.restarts.1, equals: 0}]}
`

// Lint warns where a probe cannot observe what its claim says.
func TestTraps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.yaml")
	if err := os.WriteFile(path, []byte(trapFile), 0o644); err != nil {
		t.Fatal(err)
	}
	cat := &claims.Catalog{}
	if err := cat.AddFile(path); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(Traps(cat.Claims, cat.Probes), "\n")
	for _, want := range []string{
		"claim T-WAIT: steps.gone.took counts from the wait's own start (when step delete ended)",
		"claim T-ORDER: pod.changes.appExit.1.at and pod.changes.sideExit.1.at are times the watch delivered versions of Pod web",
		"the kubelet writes no status while it kills a Pod's containers",
		"claim T-JITTER: pod.intervals.restarts.1 is held to 20000-25000 ms, a window narrower than the delay's own jitter (1.5×)",
		"claim T-FIRST: pod.first.restarts is {.status.containerStatuses[0].restartCount} in the first version the watch delivered, the Pod as created",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no warning %q in:\n%s", want, got)
		}
	}
	for _, quiet := range []string{"T-WAIT-SINCE", "T-WIDE", "T-FIRST-PHASE"} {
		if strings.Contains(got, "claim "+quiet+":") {
			t.Errorf("a warning for %s:\n%s", quiet, got)
		}
	}
}
