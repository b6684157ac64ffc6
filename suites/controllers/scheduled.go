package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/observe"
)

// How the scheduler reported binding the Pods, in the Events it records on
// each: the name it gives itself (default-scheduler) and its word for what
// it did (Binding), not the Binding request the API server received nor
// the user it authenticated, which only the audit log has.
type scheduledEvidence struct {
	// By are the controllers whose Scheduled Events with action Binding
	// name one of the ReplicaSet's Pods, sorted, each once.
	By []string `json:"by"`
	// Pods is how many of the ReplicaSet's Pods such an Event names.
	Pods int `json:"pods"`
}

// Who wrote the Deployment, as the API shows it. A field manager is the
// name the client gives (kubectl-client-side-apply), not the user the API
// server authenticated.
type deploymentManagersEvidence struct {
	// Spec are the field managers of the Deployment's entries that are not
	// a subresource's (its spec and metadata), sorted, each once.
	Spec []string `json:"spec"`
}

var (
	scheduled          = framework.DeclareEvidence[scheduledEvidence]("scheduled", specFlow)
	deploymentManagers = framework.DeclareEvidence[deploymentManagersEvidence]("deploymentManagers", specFlow)
)

// recordScheduled waits, within Timeout.API, for a Scheduled Event on each
// of the Pods, and records what came.
func recordScheduled(ctx context.Context, events *observe.Recorder, pods []string) {
	ginkgo.GinkgoHelper()
	read := func(es []observe.Event) scheduledEvidence {
		by, named := framework.BindingReports(es, pods...)
		return scheduledEvidence{By: by, Pods: named}
	}
	es, _ := framework.Await(ctx, events, fmt.Sprintf("a Scheduled Event on each of the %d Pods (%s)", len(pods), strings.Join(pods, ", ")), framework.Timeout.API, func(es []observe.Event) bool {
		return read(es).Pods == len(pods)
	})
	scheduled.Record(read(es))
}

// recordDeploymentManagers records the Deployment's field managers.
func recordDeploymentManagers(dep *appsv1.Deployment) {
	ev := deploymentManagersEvidence{Spec: []string{}}
	for _, m := range dep.ManagedFields {
		if m.Subresource == "" && !slices.Contains(ev.Spec, m.Manager) {
			ev.Spec = append(ev.Spec, m.Manager)
		}
	}
	slices.Sort(ev.Spec)
	deploymentManagers.Record(ev)
}
