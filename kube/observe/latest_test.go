package observe

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

func TestLatest(t *testing.T) {
	pod := func(name, phase string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: corev1.PodPhase(phase)}}
	}
	events := []Event{
		{Type: watch.Added, Object: pod("a", "Pending")},
		{Type: watch.Added, Object: pod("b", "Pending")},
		{Type: watch.Modified, Object: pod("a", "Running")},
		{Type: watch.Added, Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}},
		{Type: watch.Deleted, Object: pod("b", "Pending")},
	}
	got := Latest[*corev1.Pod](events)
	if len(got) != 1 || got["a"].Status.Phase != corev1.PodRunning {
		t.Errorf("Latest = %v", got)
	}
}
