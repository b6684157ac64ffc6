//go:build !e2e

package suites

import (
	"testing"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
)

// needsMoreThanRestricted are the specs whose Pods need more than the
// restricted Pod Security Standard, and why; every other spec's namespace
// carries no Pod Security label. A change here is a change of what
// kubeproof asks of a hardened cluster: docs/your-cluster.md lists them.
var needsMoreThanRestricted = map[string]podsecurity.Level{
	// A Pod that asks for no seccomp profile, to see the default (004-SECCOMP).
	"kubelet-seccomp": podsecurity.LevelBaseline,
}

func TestPodSecurityNeeds(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range framework.PodSecurityNeeds() {
		want, listed := needsMoreThanRestricted[n.Spec.ID]
		if !listed {
			want = podsecurity.LevelRestricted
		}
		if n.Level != want {
			t.Errorf("spec %s needs Pod Security %s, want %s (see needsMoreThanRestricted)", n.Spec.ID, n.Level, want)
		}
		seen[n.Spec.ID] = true
	}
	for id := range needsMoreThanRestricted {
		if !seen[id] {
			t.Errorf("no spec %s", id)
		}
	}
}
