package framework

import (
	"slices"
	"testing"

	"github.com/kubeproof/kubeproof/claims/speclink"
	"github.com/kubeproof/kubeproof/contract/cluster"
)

// What a spec declares beside its ID is in its labels, where the evidence
// catalog and the Framework read it: Disturbs requires Disposable and
// keeps what the spec would do for the reason it is skipped with.
func TestChecksDeclaresNeeds(t *testing.T) {
	labels := Checks("needs-example", Requires(cluster.EtcdAccess), Uses(cluster.AuditLog), Uses(cluster.NodeExec), Disturbs("adds simulated Nodes"))
	s := speclink.SpecsFromLabels("a spec", labels)
	if s.ID != "needs-example" {
		t.Errorf("ID %q", s.ID)
	}
	if want := []cluster.Capability{cluster.EtcdAccess, cluster.Disposable}; !slices.Equal(s.Requires, want) {
		t.Errorf("requires %v, want %v", s.Requires, want)
	}
	if want := []cluster.Capability{cluster.AuditLog, cluster.NodeExec}; !slices.Equal(s.Uses, want) {
		t.Errorf("uses %v, want %v", s.Uses, want)
	}
	if what, _ := disturbing.Load("needs-example"); what != "adds simulated Nodes" {
		t.Errorf("disturbs %v", what)
	}
	if got := declared(labels, speclink.UsesLabelPrefix); !slices.Equal(got, []cluster.Capability{cluster.AuditLog, cluster.NodeExec}) {
		t.Errorf("declared uses %v", got)
	}
}
