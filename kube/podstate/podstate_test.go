package podstate

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func waiting(reason string, restarts int32) *corev1.Pod {
	return &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
		Name: "app", RestartCount: restarts,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "m"}},
	}}}}
}

// A Pod is stuck on what the kubelet cannot get out of; a container start
// that failed once is stuck only when the kubelet's retry failed too.
func TestStuckReason(t *testing.T) {
	for _, tc := range []struct {
		reason   string
		restarts int32
		stuck    bool
	}{
		{"ContainerCreating", 0, false},
		{"ErrImageNeverPull", 0, true},
		{"CreateContainerConfigError", 0, true},
		{"CrashLoopBackOff", 1, true},
		{"RunContainerError", 0, false},
		{"RunContainerError", 1, true},
	} {
		got := StuckReason(waiting(tc.reason, tc.restarts)) != ""
		if got != tc.stuck {
			t.Errorf("%s with %d restarts: stuck = %v, want %v", tc.reason, tc.restarts, got, tc.stuck)
		}
	}
	if r := StuckReason(&corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted"}}); r == "" {
		t.Error("a failed Pod is not stuck")
	}
}
