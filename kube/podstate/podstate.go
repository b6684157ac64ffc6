// Package podstate reads a Pod's status: its conditions and whether its
// containers run, and what its kubelet's events say. It has no test-framework dependencies, so commands
// (trace, bench) and specs share it.
package podstate

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Condition returns the condition of type t among conds, or nil.
func Condition(conds []corev1.PodCondition, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// Ready reports whether the Pod's Ready condition is True.
func Ready(p *corev1.Pod) bool {
	return ConditionTrue(p.Status.Conditions, corev1.PodReady)
}

// ConditionTrue reports whether conds hold condition t with status True.
func ConditionTrue(conds []corev1.PodCondition, t corev1.PodConditionType) bool {
	c := Condition(conds, t)
	return c != nil && c.Status == corev1.ConditionTrue
}

// AllRunning reports whether statuses report at least want containers and
// every one of them running.
func AllRunning(statuses []corev1.ContainerStatus, want int) bool {
	if len(statuses) == 0 || len(statuses) < want {
		return false
	}
	for _, c := range statuses {
		if c.State.Running == nil {
			return false
		}
	}
	return true
}

// stuckReasons are container waiting reasons the kubelet does not get out
// of by itself: the image cannot be had, or the container cannot be made.
var stuckReasons = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "CrashLoopBackOff": true, "RunContainerError": true,
}

// retriedReasons are stuck reasons of a container start that can fail once
// and succeed when the kubelet tries again (runc inside a kind node, under
// load, once failed with "unable to freeze" and started the container on
// the retry 3 s later). They count as stuck only when a retry failed too:
// the failed container is then not the first, its restart count above 0.
var retriedReasons = map[string]bool{"RunContainerError": true}

// StuckReason says why a Pod will not start without outside help (its
// image cannot be pulled, a container cannot be created or keeps failing,
// the kubelet rejected the Pod), or "" while it may still start.
func StuckReason(p *corev1.Pod) string {
	if p.Status.Phase == corev1.PodFailed {
		return fmt.Sprintf("the Pod failed: %s %s", p.Status.Reason, p.Status.Message)
	}
	for _, cs := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if w := cs.State.Waiting; w != nil && stuckReasons[w.Reason] && (!retriedReasons[w.Reason] || cs.RestartCount > 0) {
			return fmt.Sprintf("container %s is waiting: %s: %s", cs.Name, w.Reason, w.Message)
		}
	}
	return ""
}

// imageReasons are the waiting reasons of a container whose image the
// kubelet could not get.
var imageReasons = map[string]bool{"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true}

// ImageUnavailable reports whether a container of the Pod waits because its
// image cannot be had.
func ImageUnavailable(p *corev1.Pod) bool {
	for _, cs := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if w := cs.State.Waiting; w != nil && imageReasons[w.Reason] {
			return true
		}
	}
	return false
}

// ImagesPresent reports whether the kubelet had the image of every one of
// the Pod's want containers: each has been created (it has an image ID, or
// runs, or ran), whatever it did afterwards.
func ImagesPresent(p *corev1.Pod, want int) bool {
	statuses := p.Status.ContainerStatuses
	if len(statuses) < want {
		return false
	}
	for _, cs := range statuses {
		if cs.ImageID == "" && cs.State.Running == nil && cs.State.Terminated == nil {
			return false
		}
	}
	return true
}

// pulledIn reads a Pulled event's message: `Successfully pulled image "x"
// in 1.2s (1.3s including waiting). Image size: 3045 bytes.` (the size
// since Kubernetes 1.30).
var pulledIn = regexp.MustCompile(`Successfully pulled image "[^"]*" in ([0-9.hmsuµn]+) \(([0-9.hmsuµn]+) including waiting\)(?:\. Image size: ([0-9]+) bytes)?`)

// Pull is what the kubelet says of a pull in its Pulled event.
type Pull struct {
	// Took is the pull's time; WithWaiting adds the time it waited for
	// the kubelet's earlier pulls (they are serial by default).
	Took, WithWaiting time.Duration
	// SizeBytes is the image's size as the runtime reports it (0 if the
	// message does not say).
	SizeBytes int64
}

// PulledDetails reads a Pulled event's message; ok is false for one that
// reports no pull ("already present on machine").
func PulledDetails(msg string) (Pull, bool) {
	m := pulledIn.FindStringSubmatch(msg)
	if m == nil {
		return Pull{}, false
	}
	took, err1 := time.ParseDuration(m[1])
	waiting, err2 := time.ParseDuration(m[2])
	if err1 != nil || err2 != nil {
		return Pull{}, false
	}
	p := Pull{Took: took, WithWaiting: waiting}
	if m[3] != "" {
		p.SizeBytes, _ = strconv.ParseInt(m[3], 10, 64)
	}
	return p, true
}

// PullDuration is how long the kubelet says pulling an image took, from
// its Pulled event's message.
func PullDuration(msg string) (time.Duration, bool) {
	p, ok := PulledDetails(msg)
	return p.Took, ok
}
