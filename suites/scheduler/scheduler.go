// Package scheduler observes kube-scheduler's choices (seeds 000, 002, 004):
// filtering out nodes a Pod does not fit (cpu, memory, node selector,
// taints, extended resources) and leaving it Pending with the reason,
// scoring the feasible ones (least allocated, node affinity, topology
// spread), and a Pod that names its node itself bypassing it.
//
// More nodes than the machine has are simulated: Node objects whose status
// and Lease the harness keeps fresh (framework.SimulatedNode), labelled
// kubeproof.io/simulated and tainted so that only the spec's own Pods land
// there. Evidence says when a result comes from simulated nodes.
package scheduler

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/access"
	"github.com/kubeproof/kubeproof/kube/audit"
	"github.com/kubeproof/kubeproof/kube/observe"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
)

// The specs of this package.
const (
	specUnschedulable = "scheduler-unschedulable"
	specExtended      = "scheduler-extended"
	specNodeName      = "scheduler-nodename"
)

// newPod is a Pod of our image requesting cpu and memory.
func newPod(name, cpu, memory string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec: podsecurity.Restricted(corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: images.TestApp.PodRef(), Args: []string{"serve"},
			Resources: framework.Resources(cpu, memory),
		}}}),
	}
}

func createPod(ctx context.Context, f *framework.Framework, p *corev1.Pod) {
	ginkgo.GinkgoHelper()
	_, err := f.Client.CoreV1().Pods(f.Namespace).Create(ctx, p, metav1.CreateOptions{})
	framework.ExpectNoError(err, "create Pod %s", p.Name)
}

// decide waits, within Timeout.Bind, for the scheduler to bind the named
// Pod or to say it cannot; what it records is what the Pod showed.
func decide(ctx context.Context, pods *observe.Recorder, name string) decision {
	ginkgo.GinkgoHelper()
	s := framework.AwaitPod(ctx, pods, name, "the scheduler's decision on "+name, framework.Timeout.Bind, func(p *corev1.Pod) bool {
		c := framework.PodCondition(p, corev1.PodScheduled)
		return p.Spec.NodeName != "" || (c != nil && c.Status == corev1.ConditionFalse)
	})
	d := decision{Decided: s.OK}
	if s.Pod != nil {
		d.Bound, d.node, d.Phase = s.Pod.Spec.NodeName != "", s.Pod.Spec.NodeName, string(s.Pod.Status.Phase)
		if c := framework.PodCondition(s.Pod, corev1.PodScheduled); c != nil {
			d.PodScheduled, d.Reason = string(c.Status), c.Reason
		}
	}
	return d
}

// bindings waits, within one Timeout.Bind, for the named Pods to be bound
// and returns the node of each (empty for a Pod not bound).
func bindings(ctx context.Context, pods *observe.Recorder, names ...string) map[string]string {
	ginkgo.GinkgoHelper()
	nodes := func(es []observe.Event) map[string]string {
		out := map[string]string{}
		for _, e := range es {
			if p := framework.PodOf(e); p != nil && slices.Contains(names, p.Name) && p.Spec.NodeName != "" {
				out[p.Name] = p.Spec.NodeName
			}
		}
		return out
	}
	events, _ := framework.Await(ctx, pods, fmt.Sprintf("Pods %v to be bound", names), framework.Timeout.Bind, func(es []observe.Event) bool {
		return len(nodes(es)) == len(names)
	})
	got := nodes(events)
	if len(got) > 0 {
		framework.Saw("kube-scheduler", "bound a Pod once its cause was removed")
	}
	return got
}

// failedScheduling returns the message of the scheduler's FailedScheduling
// event about a Pod: the first that names cause, or, if none does within
// the window, the last one seen ("" if none). The scheduler may have judged
// the Pod before its informer saw a node created just before; it judges
// again when the node arrives, and updates the event.
func failedScheduling(ctx context.Context, events *observe.Recorder, name, cause string) string {
	ginkgo.GinkgoHelper()
	naming := func(es []observe.Event) string {
		last := ""
		for _, e := range es {
			if ev, ok := e.Object.(*corev1.Event); ok && ev.InvolvedObject.Name == name && ev.Reason == "FailedScheduling" {
				last = ev.Message
				if strings.Contains(ev.Message, cause) {
					return ev.Message
				}
			}
		}
		return last
	}
	evs, _ := framework.Await(ctx, events, "a FailedScheduling event of "+name+" naming "+cause, framework.Timeout.Bind, func(es []observe.Event) bool {
		return strings.Contains(naming(es), cause)
	})
	return naming(evs)
}

var _ = ginkgo.Describe("Scheduler filtering", func() {
	f := framework.New("sched")

	ginkgo.It("a Pod no node fits stays Pending, Unschedulable, with the cause; once the cause is gone it is bound",
		framework.Checks(specUnschedulable, framework.Disturbs("adds simulated Nodes")),
		func(ctx ginkgo.SpecContext) {
			f.NeedsAccess(access.Nodes)
			pods := f.RecordPods(ctx)
			events := f.RecordEvents(ctx)
			pool := "kubeproof.io/pool"

			cpu := newPod("too-much-cpu", "1000", "16Mi")
			mem := newPod("too-much-memory", "10m", "1000Gi")
			selector := newPod("no-matching-node", "10m", "16Mi")
			selector.Spec.NodeSelector = map[string]string{pool: f.Namespace}
			taint := newPod("untolerated-taint", "10m", "16Mi")
			taint.Spec.NodeSelector = map[string]string{pool + "-tainted": f.Namespace}
			for _, p := range []*corev1.Pod{cpu, mem, selector, taint} {
				// Tolerating our simulated nodes lets the Pods land on the
				// node that removes their cause, added below.
				p.Spec.Tolerations = []corev1.Toleration{{Key: framework.SimulatedTaint, Operator: corev1.TolerationOpEqual, Value: f.Namespace, Effect: corev1.TaintEffectNoSchedule}}
			}
			tainted := f.SimulatedNode(ctx, "tainted", framework.SimNode{CPU: "4", Memory: "8Gi",
				Labels: map[string]string{pool + "-tainted": f.Namespace},
				Taints: []corev1.Taint{{Key: "dedicated", Value: f.Namespace, Effect: corev1.TaintEffectNoSchedule}}})
			for _, p := range []*corev1.Pod{cpu, mem, selector, taint} {
				createPod(ctx, f, p)
			}

			ginkgo.By("what the scheduler says of each Pod, and the cause its FailedScheduling event names")
			ev := unschedulableEvidence{SimulatedNodes: true}
			each := map[string]*unschedulablePod{cpu.Name: &ev.TooMuchCPU, mem.Name: &ev.TooMuchMemory, selector.Name: &ev.NoMatchingNode, taint.Name: &ev.UntoleratedTaint}
			causes := map[string]string{cpu.Name: "Insufficient cpu", mem.Name: "Insufficient memory",
				selector.Name: "didn't match Pod's node affinity/selector", taint.Name: "untolerated taint"}
			decided := 0
			for name, pe := range each {
				pe.decision = decide(ctx, pods, name)
				if pe.Decided {
					decided++
					msg := failedScheduling(ctx, events, name, causes[name])
					pe.NamesCause, pe.Message = strings.Contains(msg, causes[name]), f.Generalize(msg, nil)
				}
			}
			if decided == 0 {
				unschedulable.Record(ev)
				framework.Unmet("kube-scheduler", "the scheduler decided on the Pods", fmt.Sprintf("none of the 4 Pods was bound or marked unschedulable within %s", framework.Timeout.Bind))
			}
			framework.Saw("kube-scheduler", "marked Pods no node fits Unschedulable")

			ginkgo.By("removing each cause: room for cpu, room for memory, a matching node, the taint lifted")
			f.SimulatedNode(ctx, "big-cpu", framework.SimNode{CPU: "2000", Memory: "8Gi"})
			f.SimulatedNode(ctx, "big-memory", framework.SimNode{CPU: "4", Memory: "2000Gi"})
			f.SimulatedNode(ctx, "matching", framework.SimNode{CPU: "4", Memory: "8Gi", Labels: map[string]string{pool: f.Namespace}})
			patch := fmt.Sprintf(`{"spec":{"taints":[{"key":%q,"value":%q,"effect":"NoSchedule"}]}}`, framework.SimulatedTaint, f.Namespace)
			_, err := f.Client.CoreV1().Nodes().Patch(ctx, tainted.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			framework.ExpectNoError(err, "lift the taint")
			nodes := bindings(ctx, pods, cpu.Name, mem.Name, selector.Name, taint.Name)
			for name, pe := range each {
				pe.BoundAfterFix, pe.BoundTo = nodes[name] != "", strings.TrimPrefix(nodes[name], f.Namespace+"-")
			}
			unschedulable.Record(ev)
		})

	ginkgo.It("extended resources: a Pod asking for one lands only where it is advertised, and waits when none is left",
		framework.Checks(specExtended, framework.Disturbs("advertises an extended resource on a real Node")),
		func(ctx ginkgo.SpecContext) {
			node := f.WorkerNodes(ctx)[0].Name
			res := "kubeproof.io/gpu-" + strings.TrimPrefix(f.Namespace, "kp-sched-")
			ptr := "/status/capacity/" + strings.ReplaceAll(res, "/", "~1")
			add := fmt.Sprintf(`[{"op":"add","path":%q,"value":"1"},{"op":"add","path":%q,"value":"1"}]`, ptr, strings.Replace(ptr, "capacity", "allocatable", 1))
			_, err := f.Client.CoreV1().Nodes().Patch(ctx, node, types.JSONPatchType, []byte(add), metav1.PatchOptions{}, "status")
			framework.ExpectNoError(err, "advertise %s on node %s", res, node)
			ginkgo.DeferCleanup(func(ctx context.Context) {
				remove := fmt.Sprintf(`[{"op":"remove","path":%q},{"op":"remove","path":%q}]`, ptr, strings.Replace(ptr, "capacity", "allocatable", 1))
				_, _ = f.Client.CoreV1().Nodes().Patch(ctx, node, types.JSONPatchType, []byte(remove), metav1.PatchOptions{}, "status")
			})

			pods := f.RecordPods(ctx)
			events := f.RecordEvents(ctx)
			withGPU := func(name string) *corev1.Pod {
				p := newPod(name, "10m", "16Mi")
				q := resource.MustParse("1")
				p.Spec.Containers[0].Resources.Requests[corev1.ResourceName(res)] = q
				p.Spec.Containers[0].Resources.Limits[corev1.ResourceName(res)] = q
				return p
			}
			ev := extendedEvidence{}
			createPod(ctx, f, withGPU("first"))
			first := bindings(ctx, pods, "first")["first"]
			ev.FirstBound, ev.FirstOnAdvertisingNode = first != "", first == node
			if first == "" {
				extended.Record(ev)
				framework.Unmet("kube-scheduler", "a Pod asking for an advertised extended resource was bound", "not bound within "+framework.Timeout.Bind.String())
			}
			createPod(ctx, f, withGPU("second"))
			ev.Second = decide(ctx, pods, "second")
			ev.SecondWaited = ev.Second.Decided && !ev.Second.Bound && ev.Second.Reason == corev1.PodReasonUnschedulable
			if ev.Second.Decided && !ev.Second.Bound {
				msg := failedScheduling(ctx, events, "second", "Insufficient "+res)
				ev.WaitNamesResource, ev.Message = strings.Contains(msg, "Insufficient "+res), strings.ReplaceAll(f.Generalize(msg, nil), res, "{resource}")
			}
			framework.ExpectNoError(f.Client.CoreV1().Pods(f.Namespace).Delete(ctx, "first", metav1.DeleteOptions{}), "delete the first Pod")
			// The resource is free once the Pod object is gone, which waits
			// for its kubelet to stop it: the scheduler's window starts then.
			if _, gone := framework.Await(ctx, pods, "the first Pod removed", framework.Timeout.PodStart, func(es []observe.Event) bool {
				return slices.ContainsFunc(es, func(e observe.Event) bool {
					p := framework.PodOf(e)
					return e.Type == watch.Deleted && p != nil && p.Name == "first"
				})
			}); !gone {
				framework.Unmet("kubelet", "the first Pod was stopped and removed", "still there after "+framework.Timeout.PodStart.String())
			}
			second := bindings(ctx, pods, "second")["second"]
			ev.SecondOnAdvertisingNodeAfterFree = second == node
			extended.Record(ev)
		})

	ginkgo.It("a Pod created with spec.nodeName bypasses the scheduler",
		framework.Checks(specNodeName, framework.Uses(cluster.AuditLog)),
		framework.Takes(23),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.ServiceAccounts, framework.Images)
			node := f.WorkerNodes(ctx)[0].Name
			auditLog, from := f.AuditLog()
			pods := f.RecordPods(ctx)
			events := f.RecordEvents(ctx)
			p := newPod("placed", "10m", "16Mi")
			p.Spec.NodeName = node
			createPod(ctx, f, p)
			stored := framework.AwaitPod(ctx, pods, "placed", "the Pod's creation", framework.Timeout.API, func(*corev1.Pod) bool { return true })
			gomega.Expect(stored.OK).To(gomega.BeTrue(), "the Pod was created, but no watch event arrived")
			ev := bypassEvidence{StoredNodeName: stored.Pod.Spec.NodeName != ""}
			// Once the kubelet started the Pod, a binding by the scheduler
			// would have come before: read the events and requests then.
			started := framework.ReadyPod(ctx, pods, "placed")
			ev.Ready = framework.PodReady(started.Pod)
			evs, _ := framework.Await(ctx, events, "the Started event", framework.Timeout.API, func(es []observe.Event) bool {
				return framework.FindEvent(es, "placed", "Started") != nil
			})
			ev.ScheduledEvent = framework.FindEvent(evs, "placed", "Scheduled") != nil
			if auditLog != nil {
				bindings, err := auditLog.Since(from, audit.On("pods", f.Namespace, "placed", "binding"))
				framework.ExpectNoError(err, "read the bindings from the audit log")
				n := len(bindings)
				ev.BindingRequests = &n
			}
			bypass.Record(ev)
		})
})

// Evidence: what the specs above record, under the names the claims files use.

// decision is what the scheduler did with a Pod within its window: bound
// it, or said it cannot place it (PodScheduled=False), or nothing.
type decision struct {
	// Decided: within Timeout.Bind the Pod was bound or its PodScheduled
	// condition turned False.
	Decided bool `json:"decided"`
	// Bound: the Pod had a nodeName when the wait ended.
	Bound bool `json:"bound"`
	// PodScheduled and Reason are its PodScheduled condition's status and
	// reason then ("" without it).
	PodScheduled string `json:"podScheduled"`
	Reason       string `json:"reason"`
	// Phase is its status.phase then.
	Phase string `json:"phase"`
	node  string
}

// One Pod that no node fits: what the scheduler said, and what it did once
// the cause was removed.
type unschedulablePod struct {
	decision
	// NamesCause: the FailedScheduling event names the expected cause (e.g.
	// "Insufficient cpu").
	NamesCause bool `json:"namesCause"`
	// Message is that event's message, generalized.
	Message string `json:"message"`
	// BoundAfterFix: the Pod was bound within Timeout.Bind once the cause was
	// removed.
	BoundAfterFix bool `json:"boundAfterFix"`
	// BoundTo is the node it was bound to then, without the namespace prefix.
	BoundTo string `json:"boundTo"`
}

// Four Pods no (simulated) node fits, each for one cause.
type unschedulableEvidence struct {
	// TooMuchCPU, TooMuchMemory, NoMatchingNode and UntoleratedTaint are the
	// Pods asking for more CPU or memory than a node has, for a node label
	// none has, and not tolerating a taint.
	TooMuchCPU       unschedulablePod `json:"too-much-cpu"`
	TooMuchMemory    unschedulablePod `json:"too-much-memory"`
	NoMatchingNode   unschedulablePod `json:"no-matching-node"`
	UntoleratedTaint unschedulablePod `json:"untolerated-taint"`
	// SimulatedNodes: the nodes are Node objects without a kubelet.
	SimulatedNodes bool `json:"simulatedNodes"`
}

// A Pod asking for an extended resource advertised on one node.
type extendedEvidence struct {
	// FirstBound: the first Pod asking for the resource was bound within
	// Timeout.Bind; FirstOnAdvertisingNode: to the node advertising it.
	FirstBound             bool `json:"firstBound"`
	FirstOnAdvertisingNode bool `json:"firstOnAdvertisingNode"`
	// Second is the scheduler's decision on a second such Pod while the first
	// held the resource.
	Second decision `json:"second"`
	// SecondWaited: the second was left unbound with reason Unschedulable.
	SecondWaited bool `json:"secondWaited"`
	// WaitNamesResource: its FailedScheduling event says "Insufficient" of
	// the resource; Message is that message, generalized.
	WaitNamesResource bool `json:"waitNamesResource"`
	// SecondOnAdvertisingNodeAfterFree: once the first Pod was removed, the
	// second was bound to the advertising node.
	SecondOnAdvertisingNodeAfterFree bool   `json:"secondOnAdvertisingNodeAfterFree"`
	Message                          string `json:"message"`
}

// A Pod created with spec.nodeName.
type bypassEvidence struct {
	// StoredNodeName: the Pod's first stored state has its nodeName.
	StoredNodeName bool `json:"storedNodeName"`
	// Ready: the Pod turned Ready.
	Ready bool `json:"ready"`
	// ScheduledEvent: a Scheduled event of the Pod had arrived by its Started
	// event.
	ScheduledEvent bool `json:"scheduledEvent"`
	// BindingRequests is how many binding requests for the Pod the audit log
	// has; absent without it.
	BindingRequests *int `json:"bindingRequests,omitempty"`
}

var (
	unschedulable = framework.DeclareEvidence[unschedulableEvidence]("unschedulable", specUnschedulable)
	extended      = framework.DeclareEvidence[extendedEvidence]("extended", specExtended)
	bypass        = framework.DeclareEvidence[bypassEvidence]("bypass", specNodeName)
)
