package faults

import (
	"slices"
	"testing"
	"testing/fstest"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/internal/runner"
)

func TestFocusRunsTheListedClaimsSpecs(t *testing.T) {
	cat, err := claims.Load(fstest.MapFS{"d.yaml": {Data: []byte(`
document: {file: d.txt, title: D}
claims:
- {id: LISTED, section: s, quote: q, statement: s, component: kube-scheduler, kind: behaviour, specs: [sp-a], expect: [{evidence: e.v, equals: 1}]}
- {id: SAME-SPEC, section: s, quote: q, statement: s, component: kubelet, kind: behaviour, specs: [sp-a], expect: [{evidence: e.v, equals: 1}]}
- {id: HALF, section: s, quote: q, statement: s, component: kubelet, kind: behaviour, specs: [sp-a, sp-b], expect: [{evidence: e.v, equals: 1}]}
- {id: ELSEWHERE, section: s, quote: q, statement: s, component: etcd, kind: behaviour, specs: [sp-b], expect: [{evidence: e.v, equals: 1}]}
`)}})
	if err != nil {
		t.Fatal(err)
	}
	s := focus(runner.Suites{Catalog: cat, Selected: cat.Claims}, Fault{ID: "f", Refutes: []string{"LISTED"}})
	var ids []string
	for _, c := range s.Selected {
		ids = append(ids, c.ID)
	}
	// HALF also needs sp-b, which the focused run does not run: judged on
	// half its evidence it would change for the focus, not the fault.
	if want := []string{"LISTED", "SAME-SPEC"}; !slices.Equal(ids, want) {
		t.Errorf("judged claims %v, want %v", ids, want)
	}
	// sp-a alone: sp-b's specs (ELSEWHERE's, HALF's other) are not run.
	if want := "(spec:sp-a)"; s.Filter != want {
		t.Errorf("label filter %q, want %q", s.Filter, want)
	}
}
