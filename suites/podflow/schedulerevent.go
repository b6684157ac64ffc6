package podflow

import (
	"context"

	"github.com/onsi/ginkgo/v2"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/observe"
)

// How the scheduler reported binding the Pod, in the Event it records on
// it: the name it gives itself (default-scheduler) with its word for what
// it did (reason Scheduled, action Binding). The binding leaves no field
// manager on the Pod (it goes through the binding subresource), so this is
// what the API shows of who bound it; not the request the API server
// received nor the user it authenticated, which only the audit log has.
type schedulerEventEvidence struct {
	// By are the controllers whose Scheduled Events with action Binding
	// name the Pod, sorted, each once; empty when none came within
	// Timeout.API.
	By []string `json:"by"`
}

var schedulerEvent = framework.DeclareEvidence[schedulerEventEvidence]("schedulerEvent", specCreate)

// recordSchedulerEvent waits, within Timeout.API, for the Event in which
// the scheduler reports binding the Pod, and records who reported it.
func recordSchedulerEvent(ctx context.Context, events *observe.Recorder, pod string) {
	ginkgo.GinkgoHelper()
	read := func(es []observe.Event) schedulerEventEvidence {
		by, _ := framework.BindingReports(es, pod)
		return schedulerEventEvidence{By: by}
	}
	es, _ := framework.Await(ctx, events, "the Scheduled Event of Pod "+pod, framework.Timeout.API, func(es []observe.Event) bool {
		return len(read(es).By) > 0
	})
	schedulerEvent.Record(read(es))
}
