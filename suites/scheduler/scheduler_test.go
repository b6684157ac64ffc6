package scheduler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeproof/kubeproof/kube/podsecurity"
	"github.com/kubeproof/kubeproof/kube/podsecurity/podsecuritytest"
)

// The score weights of the default profile, from the scheduler's /configz,
// whatever case it writes its internal type's fields in; another profile's
// are not the default's, and a plugin without a weight has none.
func TestWeightsOf(t *testing.T) {
	raw := []byte(`{"componentconfig":{"Profiles":[
	  {"SchedulerName":"default-scheduler","Plugins":{"MultiPoint":{"Enabled":[{"Name":"NodeResourcesFit","Weight":1},{"Name":"PrioritySort","Weight":0}]},
	   "Score":{"Enabled":[{"Name":"PodTopologySpread","Weight":2}]}}},
	  {"SchedulerName":"other","Plugins":{"Score":{"Enabled":[{"Name":"ImageLocality","Weight":9}]}}}]}}`)
	ev := weightsOf(raw)
	if ev.Error != "" || len(ev.Weights) != 2 || ev.Weights["NodeResourcesFit"] != 1 || ev.Weights["PodTopologySpread"] != 2 {
		t.Errorf("weights %+v", ev)
	}
	if bad := weightsOf([]byte("<html>")); bad.Error == "" || len(bad.Weights) != 0 {
		t.Errorf("not JSON: %+v", bad)
	}
}

// The scheduler specs' Pods pass the restricted Pod Security level, ask
// for what they are given, and are held to a node label when asked.
func TestNewPod(t *testing.T) {
	p := newPod("big", "500m", "256Mi")
	podsecuritytest.Passes(t, "the scheduler specs' Pod", podsecurity.LevelRestricted, p.ObjectMeta, p.Spec)
	if got := p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; got.String() != "500m" {
		t.Errorf("CPU request %s", got.String())
	}
	requireNodeLabel(p, "zone", "a", "b")
	req := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0]
	if req.Key != "zone" || req.Operator != corev1.NodeSelectorOpIn || len(req.Values) != 2 {
		t.Errorf("affinity %+v", req)
	}
	if abs(-3) != 3 || abs(2) != 2 {
		t.Error("abs")
	}
}
