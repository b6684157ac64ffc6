package framework

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeproof/kubeproof/kube/observe"
)

// Only a Scheduled Event with action Binding on one of the Pods counts,
// under the name its reporter gives (reportingController, else the
// source's component).
func TestBindingReports(t *testing.T) {
	ev := func(pod, reason, action, controller, component string) observe.Event {
		return observe.Event{Object: &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: pod + "." + reason},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: pod}, Reason: reason, Action: action,
			ReportingController: controller, Source: corev1.EventSource{Component: component}}}
	}
	es := []observe.Event{
		ev("a", "Scheduled", "Binding", "default-scheduler", ""),
		ev("b", "Scheduled", "Binding", "", "my-scheduler"),
		ev("b", "Pulled", "", "kubelet", ""),
		ev("c", "Scheduled", "Binding", "default-scheduler", ""),
		ev("x", "Scheduled", "Binding", "other", ""),
	}
	by, named := BindingReports(es, "a", "b", "c")
	if want := []string{"default-scheduler", "my-scheduler"}; !slices.Equal(by, want) || named != 3 {
		t.Errorf("by %q, %d named; want %q, 3", by, named, want)
	}
	if by, named := BindingReports(es, "none"); len(by) != 0 || by == nil || named != 0 {
		t.Errorf("no Pod's reports: %q (nil: %t), %d", by, by == nil, named)
	}
}
