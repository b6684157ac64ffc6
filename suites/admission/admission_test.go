package admission

import (
	"strings"
	"testing"
	"time"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
	"github.com/kubeproof/kubeproof/kube/podsecurity/podsecuritytest"
	"github.com/kubeproof/kubeproof/webhooks"
)

// The admission specs' Pod is the seeds' pod.yaml under its own name, with
// or without its limits (the webhooks that fill them in need Pods without),
// and passes the restricted Pod Security level either way.
func TestPod(t *testing.T) {
	with, without := pod("a", true), pod("b", false)
	if with.Name != "a" || without.Name != "b" || len(with.Spec.Containers) == 0 {
		t.Fatalf("pods %s %s", with.Name, without.Name)
	}
	if with.Spec.Containers[0].Resources.Limits == nil || without.Spec.Containers[0].Resources.Limits != nil {
		t.Error("limits kept or dropped the wrong way")
	}
	podsecuritytest.Passes(t, "the admission Pod without limits", podsecurity.LevelRestricted, without.ObjectMeta, without.Spec)
	if m := marker(false); !strings.HasPrefix(m.Name, "marker-") || m.Name == marker(false).Name {
		t.Errorf("markers are not unique: %s", m.Name)
	}
}

// What the specs read of the API server's and the webhooks' answers.
func TestReadings(t *testing.T) {
	p := storedPod(framework.Response{Body: []byte(`{"metadata":{"name":"web"},"spec":{"containers":[{"name":"app"},{"name":"sidecar"}]}}`)})
	if p.Name != "web" || strings.Join(containerNames(p.Spec.Containers), ",") != "app,sidecar" {
		t.Errorf("stored %s %v", p.Name, containerNames(p.Spec.Containers))
	}
	if got := containerNames(storedPod(framework.Response{Body: []byte("forbidden")}).Spec.Containers); got == nil || len(got) != 0 {
		t.Errorf("an answer without a Pod: %v", got)
	}
	if firstContainers(nil) != nil || strings.Join(firstContainers([]webhooks.Call{{Containers: []string{"app"}}, {Containers: []string{"x"}}}), ",") != "app" {
		t.Error("firstContainers")
	}
	a, b := time.Unix(1, 0), time.Unix(2, 0)
	if !minTime(a, b).Equal(a) || !maxTime(a, b).Equal(b) || !minTime(b, a).Equal(a) {
		t.Error("minTime/maxTime")
	}
	if firstLine("  denied\nby policy") != "denied" || !contains([]string{"x"}, "x") {
		t.Error("firstLine/contains")
	}
}
