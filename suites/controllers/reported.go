package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/observe"
)

// What the controllers reported doing, in the Events they record: the name
// a controller gives itself (deployment-controller), not the user the API
// server authenticated, which only the audit log has.
type reportedEvidence struct {
	// ReplicaSetBy is the controller whose Event on the Deployment says it
	// scaled up the ReplicaSet (ScalingReplicaSet, naming it); "" when none
	// came within Timeout.API.
	ReplicaSetBy string `json:"replicaSetBy"`
	// PodsBy are the controllers whose Events on the ReplicaSet say they
	// created its Pods (SuccessfulCreate), sorted, each once.
	PodsBy []string `json:"podsBy"`
	// PodsCreated is how many of the ReplicaSet's Pods those Events name.
	PodsCreated int `json:"podsCreated"`
	// PodCreatesFailed is how many creates the ReplicaSet's Events report
	// failed (FailedCreate).
	PodCreatesFailed int `json:"podCreatesFailed"`
}

var reported = framework.DeclareEvidence[reportedEvidence]("reported", specFlow)

// recordReported waits, within Timeout.API, for the Events that report the
// ReplicaSet's creation and each of its Pods', and records what came.
func recordReported(ctx context.Context, events *observe.Recorder, deployment, rs string, pods []string) {
	ginkgo.GinkgoHelper()
	read := func(es []observe.Event) reportedEvidence {
		ev := reportedEvidence{PodsBy: []string{}}
		created := map[string]bool{}
		for _, e := range es {
			v, ok := e.Object.(*corev1.Event)
			if !ok {
				continue
			}
			by := v.ReportingController
			if by == "" {
				by = v.Source.Component
			}
			switch o := v.InvolvedObject; {
			case o.Kind == "Deployment" && o.Name == deployment && v.Reason == "ScalingReplicaSet" && strings.Contains(v.Message, " "+rs+" "):
				ev.ReplicaSetBy = by
			case o.Kind == "ReplicaSet" && o.Name == rs && v.Reason == "SuccessfulCreate":
				for _, p := range pods {
					if strings.HasSuffix(v.Message, ": "+p) && !created[p] {
						created[p] = true
						if !slices.Contains(ev.PodsBy, by) {
							ev.PodsBy = append(ev.PodsBy, by)
						}
					}
				}
			case o.Kind == "ReplicaSet" && o.Name == rs && v.Reason == "FailedCreate":
				ev.PodCreatesFailed += max(int(v.Count), 1)
			}
		}
		ev.PodsCreated = len(created)
		slices.Sort(ev.PodsBy)
		return ev
	}
	es, _ := framework.Await(ctx, events, fmt.Sprintf("the Events that report ReplicaSet %s and its %d Pods", rs, len(pods)), framework.Timeout.API, func(es []observe.Event) bool {
		ev := read(es)
		return ev.ReplicaSetBy != "" && ev.PodsCreated == len(pods)
	})
	reported.Record(read(es))
}
