package controllers

import (
	"context"
	"slices"

	"github.com/onsi/ginkgo/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/observe"
)

// The steps of a rollout as the API shows them: the changes of the
// ReplicaSets' replicas the watch saw stored, and the Events in which the
// controller that made them reports each (the name it gives itself, not
// the user the API server authenticated, which only the audit log has).
type rolloutStepsEvidence struct {
	// ReplicaChanges is how many times a ReplicaSet's spec.replicas was
	// stored changed during the rollout (each a write of its own).
	ReplicaChanges int `json:"replicaChanges"`
	// ScaleEvents is how many ScalingReplicaSet Events the Deployment got
	// during the rollout, one per step its controller reports.
	ScaleEvents int `json:"scaleEvents"`
	// ScaledBy are the controllers that reported them, sorted, each once.
	ScaledBy []string `json:"scaledBy"`
}

var rolloutSteps = framework.DeclareEvidence[rolloutStepsEvidence]("rolloutSteps", specRollout)

// recordRolloutSteps reads the rollout's steps from the watch of the
// ReplicaSets and from the namespace's Events, each from where the
// rollout began (rsStart, eventStart). Events are recorded after the
// change they report: they are awaited, within Timeout.API, until they
// report as many steps as the watch saw.
func recordRolloutSteps(ctx context.Context, rsEvents []observe.Event, rsStart int, recorder *observe.Recorder, eventStart int, deployment string) {
	ginkgo.GinkgoHelper()
	ev := rolloutStepsEvidence{ScaledBy: []string{}}
	replicas := map[string]int32{}
	for i, e := range rsEvents {
		rs, ok := e.Object.(*appsv1.ReplicaSet)
		if !ok || e.Type == watch.Deleted || rs.Spec.Replicas == nil {
			continue
		}
		was, seen := replicas[rs.Name]
		if i >= rsStart && seen && was != *rs.Spec.Replicas {
			ev.ReplicaChanges++
		}
		replicas[rs.Name] = *rs.Spec.Replicas
	}
	steps := func(es []observe.Event) int {
		n := 0
		for _, e := range es[min(eventStart, len(es)):] {
			if v, ok := e.Object.(*corev1.Event); ok && v.InvolvedObject.Kind == "Deployment" && v.InvolvedObject.Name == deployment && v.Reason == "ScalingReplicaSet" {
				n++
			}
		}
		return n
	}
	events, _ := framework.Await(ctx, recorder, "the Deployment's ScalingReplicaSet Events for the rollout's steps", framework.Timeout.API, func(es []observe.Event) bool {
		return steps(es) >= ev.ReplicaChanges
	})
	for _, e := range events[min(eventStart, len(events)):] {
		v, ok := e.Object.(*corev1.Event)
		if !ok || v.InvolvedObject.Kind != "Deployment" || v.InvolvedObject.Name != deployment || v.Reason != "ScalingReplicaSet" {
			continue
		}
		ev.ScaleEvents++
		by := v.ReportingController
		if by == "" {
			by = v.Source.Component
		}
		if !slices.Contains(ev.ScaledBy, by) {
			ev.ScaledBy = append(ev.ScaledBy, by)
		}
	}
	slices.Sort(ev.ScaledBy)
	rolloutSteps.Record(ev)
}
