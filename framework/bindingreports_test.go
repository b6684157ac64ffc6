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

// What keeps Pods off a node is said node by node, and the scheduler's
// last word on an unbound Pod is its PodScheduled condition's message.
func TestWhyUnscheduled(t *testing.T) {
	nodes := []corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{
			{Key: "node.kubernetes.io/disk-pressure", Effect: corev1.TaintEffectNoSchedule},
			{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "n2"}, Spec: corev1.NodeSpec{Unschedulable: true}},
	}
	if got, want := whyNotWorkers(nodes), "n1: taint node.kubernetes.io/disk-pressure:NoSchedule; n2: unschedulable (cordoned)"; got != want {
		t.Errorf("whyNotWorkers = %q, want %q", got, want)
	}
	pod := func(node, msg string) observe.Event {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{NodeName: node}}
		if msg != "" {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Message: msg}}
		}
		return observe.Event{Object: p}
	}
	es := []observe.Event{pod("", "0/1 nodes are available: old"), pod("", "0/1 nodes are available: new"), pod("n1", "")}
	if got := SchedulerSays(es); got != "Pod p: 0/1 nodes are available: new" {
		t.Errorf("SchedulerSays = %q", got)
	}
	if got := SchedulerSays(es[2:]); got != "" {
		t.Errorf("a bound Pod's: %q", got)
	}
}
