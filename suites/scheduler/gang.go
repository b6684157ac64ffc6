package scheduler

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/metrics"
)

// The spec of this file.
const specGangPermit = "scheduler-gang-permit"

// podGroups is the resource of gang scheduling's PodGroup (v1.37: beta,
// behind the GenericWorkload feature gate, served only when enabled).
var podGroups = schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1beta1", Resource: "podgroups"}

// permitWaits is the scheduler's histogram of the time Pods waited at
// Permit, by how the wait ended: one sample per Pod a Permit plugin held.
const permitWaits = "scheduler_permit_wait_duration_seconds_count"

// Permit approves, holds or rejects a Pod at the end of its scheduling
// cycle (seed 004's Permit row; its example is gang scheduling): the
// GangScheduling plugin holds a Pod of a gang that fits a node at Permit
// until enough of its gang are placed, and lets them all be bound then.
// Two simulated nodes; a gang of two whose second Pod fits none, then a
// second that fits.
var _ = ginkgo.Describe("Scheduler Permit", func() {
	f := framework.New("sched-gang")

	ginkgo.It("holds a Pod of a gang at Permit while its peer fits no node, and binds both once the peer fits",
		framework.Checks(specGangPermit, framework.Disturbs("adds simulated Nodes")),
		func(ctx ginkgo.SpecContext) {
			const scheduler = "kube-scheduler"
			if why := gangSchedulingMissing(ctx, f); why != "" {
				gangPermit.Unobservable("%s", why)
				return
			}
			dyn, err := dynamic.NewForConfig(f.RESTConfig)
			framework.ExpectNoError(err, "a dynamic client")
			group := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
				"metadata": map[string]any{"name": "gang"},
				"spec":     map[string]any{"schedulingPolicy": map[string]any{"gang": map[string]any{"minCount": int64(2)}}},
			}}
			_, err = dyn.Resource(podGroups).Namespace(f.Namespace).Create(ctx, group, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create the PodGroup (minCount 2)")
			for _, n := range []string{"a", "b"} {
				f.SimulatedNode(ctx, n, framework.SimNode{CPU: "4", Memory: "8Gi"})
			}
			scrape := func(ctx context.Context) metrics.Samples {
				raw, err := f.ComponentGet(ctx, scheduler, "/metrics")
				framework.ExpectNoError(err, "read the scheduler's metrics")
				return metrics.Parse(raw)
			}
			waitedOK := framework.Counter(permitWaits, map[string]string{"result": "Success"})
			before := scrape(ctx)

			pods := f.RecordPods(ctx)
			member := func(name, cpu string) {
				p := newPod(name, cpu, "64Mi")
				f.TolerateSimulated(&p.Spec)
				p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptr.To("gang")}
				createPod(ctx, f, p)
			}
			member("first", "100m")
			member("too-big", "64")
			ev := gangPermitEvidence{}
			// An observation window: the first Pod fits a node, and must not
			// be bound while its peer fits none.
			held := framework.AwaitPod(ctx, pods, "first", "Pod first to be bound (it must not be, alone)", framework.Timeout.Bind,
				func(p *corev1.Pod) bool { return p.Spec.NodeName != "" })
			ev.HeldWhilePeerUnplaced = !held.OK
			ev.WindowSeconds = framework.Timeout.Bind.Seconds()
			err = f.Client.CoreV1().Pods(f.Namespace).Delete(ctx, "too-big", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			framework.ExpectNoError(err, "delete the peer that fits no node")
			member("second", "100m")
			nodes := bindings(ctx, pods, "first", "second")
			ev.BoundTogether = nodes["first"] != "" && nodes["second"] != ""
			if ev.BoundTogether {
				ev.PermitWaitsAllowed = waitedOK(scrape(ctx)) - waitedOK(before)
			}
			gangPermit.Record(ev)
		})
})

// gangSchedulingMissing says why this cluster cannot do gang scheduling
// ("" when it can): the API server serves no PodGroup, or the scheduler's
// profile has no GangScheduling plugin.
func gangSchedulingMissing(ctx context.Context, f *framework.Framework) string {
	const gate = "gang scheduling needs the GenericWorkload feature gate (beta in v1.37, off by default) on kube-apiserver and kube-scheduler, and scheduling.k8s.io/v1beta1 served (--runtime-config); `kubeproof faults --fault gang-scheduling` makes such a cluster"
	resources, err := f.Client.Discovery().ServerResourcesForGroupVersion(podGroups.GroupVersion().String())
	if err != nil || !slices.ContainsFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Name == podGroups.Resource }) {
		return "the API server serves no " + podGroups.GroupVersion().String() + " PodGroup: " + gate
	}
	raw, err := f.ComponentGet(ctx, "kube-scheduler", "/configz")
	if err != nil {
		return fmt.Sprintf("the scheduler's configuration cannot be read here: %v", err)
	}
	if !strings.Contains(string(raw), `"GangScheduling"`) {
		return "the scheduler's default profile has no GangScheduling plugin: " + gate
	}
	return ""
}

// A gang of two (a PodGroup with minCount 2) on two simulated nodes.
type gangPermitEvidence struct {
	// HeldWhilePeerUnplaced: the gang's first Pod, which fits a node, was
	// not bound within WindowSeconds while its peer fitted no node.
	HeldWhilePeerUnplaced bool    `json:"heldWhilePeerUnplaced"`
	WindowSeconds         float64 `json:"windowSeconds"`
	// BoundTogether: once a peer that fits replaced the one that did not,
	// both were bound.
	BoundTogether bool `json:"boundTogether"`
	// PermitWaitsAllowed is how many Pods the scheduler let go after
	// holding them at Permit meanwhile (its permit_wait_duration_seconds,
	// result Success).
	PermitWaitsAllowed float64 `json:"permitWaitsAllowed"`
}

var gangPermit = framework.DeclareEvidence[gangPermitEvidence]("gangPermit", specGangPermit)
