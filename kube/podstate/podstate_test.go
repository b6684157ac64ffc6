package podstate

import (
	"testing"
	"time"

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

// The kubelet's Pulled messages, as Kubernetes 1.37 writes them: a pull's
// time, with the wait for earlier pulls, and the image's size; a present
// image reports no pull.
func TestPulledDetails(t *testing.T) {
	p, ok := PulledDetails(`Successfully pulled image "10.250.0.1:5000/kubeproof/fresh:a-b" in 147ms (1.203s including waiting). Image size: 3125340 bytes.`)
	if !ok || p.Took != 147*time.Millisecond || p.WithWaiting != 1203*time.Millisecond || p.SizeBytes != 3125340 {
		t.Errorf("PulledDetails = %+v, %v", p, ok)
	}
	if p, ok := PulledDetails(`Successfully pulled image "x:1" in 1m2.5s (1m2.5s including waiting)`); !ok || p.Took != 62500*time.Millisecond || p.SizeBytes != 0 {
		t.Errorf("PulledDetails without a size = %+v, %v", p, ok)
	}
	if _, ok := PulledDetails(`Container image "kubeproof.local/testapp:v1" already present on machine and can be accessed by the pod`); ok {
		t.Error("a present image read as a pull")
	}
}
