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
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/audit"
	"github.com/kubeproof/kubeproof/framework/images"
	"github.com/kubeproof/kubeproof/framework/observe"
)

// schedTimeout bounds a wait for the scheduler to decide.
const schedTimeout = 2 * time.Minute

// causeTimeout bounds the wait for the scheduler to name a given cause once
// it has judged a Pod; a node event makes it judge again at once.
const causeTimeout = 30 * time.Second

// newPod is a Pod of our image requesting cpu and memory.
func newPod(name, cpu, memory string) *corev1.Pod {
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: images.TestApp.Ref, Args: []string{"serve"},
			Resources: corev1.ResourceRequirements{Requests: req, Limits: req},
		}}},
	}
}

func createPod(ctx context.Context, f *framework.Framework, p *corev1.Pod) {
	ginkgo.GinkgoHelper()
	_, err := f.Client.CoreV1().Pods(f.Namespace).Create(ctx, p, metav1.CreateOptions{})
	framework.ExpectNoError(err, "create Pod %s", p.Name)
}

// unschedulable waits until the scheduler gives up on a Pod for now and
// returns its PodScheduled condition.
func unschedulable(ctx context.Context, pods *observe.Recorder, name string) corev1.PodCondition {
	ginkgo.GinkgoHelper()
	_, p, _ := framework.WaitForPodEvent(ctx, pods, name+" to be found unschedulable", func(_ observe.Event, p *corev1.Pod) bool {
		c := framework.PodCondition(p, corev1.PodScheduled)
		return p.Name == name && c != nil && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
	})
	return *framework.PodCondition(p, corev1.PodScheduled)
}

// boundTo waits until a Pod is bound and returns the node.
func boundTo(ctx context.Context, pods *observe.Recorder, name string) string {
	ginkgo.GinkgoHelper()
	_, p, _ := framework.WaitForPodEvent(ctx, pods, name+" to be bound", func(_ observe.Event, p *corev1.Pod) bool {
		return p.Name == name && p.Spec.NodeName != ""
	})
	return p.Spec.NodeName
}

// failedScheduling returns the message of the scheduler's FailedScheduling
// event about a Pod: the first that names cause, or, if none does within
// causeTimeout, the last one seen. The scheduler may have judged the Pod
// before its informer saw a node created just before; it judges again when
// the node arrives, and updates the event.
func failedScheduling(ctx context.Context, events *observe.Recorder, name, cause string) string {
	ginkgo.GinkgoHelper()
	evs, err := events.WaitFor(ctx, schedTimeout, "the FailedScheduling event of "+name, func(es []observe.Event) bool {
		return framework.FindEvent(es, name, "FailedScheduling") != nil
	}, nil)
	framework.ExpectNoError(err, "wait for the FailedScheduling event of %s", name)
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
	evs, _ = events.WaitFor(ctx, causeTimeout, "a FailedScheduling event of "+name+" naming "+cause, func(es []observe.Event) bool {
		return strings.Contains(naming(es), cause)
	}, nil)
	return naming(evs)
}

var _ = ginkgo.Describe("Scheduler filtering", func() {
	f := framework.New("sched")

	ginkgo.It("a Pod no node fits stays Pending, Unschedulable, with the cause; once the cause is gone it is bound",
		framework.Checks("scheduler-unschedulable", "000-SCHEDULER-CONSIDERS", "002-FILTER", "004-FILTER-PENDING", "004-FILTER-PLUGINS"),
		func(ctx ginkgo.SpecContext) {
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

			ginkgo.By("each Pod Pending, Unschedulable, with a FailedScheduling event naming the cause")
			ev := map[string]any{}
			for _, c := range []struct{ pod, cause string }{
				{cpu.Name, "Insufficient cpu"}, {mem.Name, "Insufficient memory"},
				{selector.Name, "didn't match Pod's node affinity/selector"}, {taint.Name, "untolerated taint"},
			} {
				cond := unschedulable(ctx, pods, c.pod)
				msg := failedScheduling(ctx, events, c.pod, c.cause)
				ev[c.pod] = map[string]any{"podScheduled": string(cond.Status), "reason": cond.Reason,
					"namesCause": strings.Contains(msg, c.cause), "message": f.Generalize(msg, nil), "phase": "Pending"}
			}

			ginkgo.By("removing each cause: room for cpu, room for memory, a matching node, the taint lifted")
			f.SimulatedNode(ctx, "big-cpu", framework.SimNode{CPU: "2000", Memory: "8Gi"})
			f.SimulatedNode(ctx, "big-memory", framework.SimNode{CPU: "4", Memory: "2000Gi"})
			f.SimulatedNode(ctx, "matching", framework.SimNode{CPU: "4", Memory: "8Gi", Labels: map[string]string{pool: f.Namespace}})
			patch := fmt.Sprintf(`{"spec":{"taints":[{"key":%q,"value":%q,"effect":"NoSchedule"}]}}`, framework.SimulatedTaint, f.Namespace)
			_, err := f.Client.CoreV1().Nodes().Patch(ctx, tainted.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			framework.ExpectNoError(err, "lift the taint")
			for _, name := range []string{cpu.Name, mem.Name, selector.Name, taint.Name} {
				node := boundTo(ctx, pods, name)
				ev[name].(map[string]any)["boundAfterFix"] = true
				ev[name].(map[string]any)["boundTo"] = strings.TrimPrefix(node, f.Namespace+"-")
			}
			ev["simulatedNodes"] = true
			framework.Evidence("unschedulable", ev)
		})

	ginkgo.It("extended resources: a Pod asking for one lands only where it is advertised, and waits when none is left",
		framework.Checks("scheduler-extended", "004-EXTENDED-RESOURCES"),
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
			createPod(ctx, f, withGPU("first"))
			first := boundTo(ctx, pods, "first")
			createPod(ctx, f, withGPU("second"))
			cond := unschedulable(ctx, pods, "second")
			msg := failedScheduling(ctx, events, "second", "Insufficient "+res)
			framework.ExpectNoError(f.Client.CoreV1().Pods(f.Namespace).Delete(ctx, "first", metav1.DeleteOptions{}), "delete the first Pod")
			second := boundTo(ctx, pods, "second")
			framework.Evidence("extended", map[string]any{
				"firstOnAdvertisingNode": first == node, "secondWaited": cond.Reason == corev1.PodReasonUnschedulable,
				"waitNamesResource": strings.Contains(msg, "Insufficient "+res), "secondOnAdvertisingNodeAfterFree": second == node,
				"message": strings.ReplaceAll(f.Generalize(msg, nil), res, "{resource}"),
			})
		})

	ginkgo.It("a Pod created with spec.nodeName bypasses the scheduler",
		framework.Checks("scheduler-nodename", "003-NODENAME-EMPTY"),
		func(ctx ginkgo.SpecContext) {
			node := f.WorkerNodes(ctx)[0].Name
			auditLog, from := f.AuditLog()
			pods := f.RecordPods(ctx)
			events := f.RecordEvents(ctx)
			p := newPod("placed", "10m", "16Mi")
			p.Spec.NodeName = node
			createPod(ctx, f, p)
			_, stored, _ := framework.WaitForPodEvent(ctx, pods, "the Pod's creation", func(e observe.Event, p *corev1.Pod) bool { return p.Name == "placed" })
			_, ready, _ := framework.WaitForPodEvent(ctx, pods, "the placed Pod to be Ready", func(_ observe.Event, p *corev1.Pod) bool { return framework.PodReady(p) })
			evs, err := events.WaitFor(ctx, framework.PodStartTimeout, "the Started event", func(es []observe.Event) bool {
				return framework.FindEvent(es, "placed", "Started") != nil
			}, nil)
			framework.ExpectNoError(err, "wait for the Started event")
			ev := map[string]any{
				"storedNodeName": stored.Spec.NodeName != "", "ready": framework.PodReady(ready),
				"scheduledEvent": framework.FindEvent(evs, "placed", "Scheduled") != nil,
			}
			if auditLog != nil {
				bindings, err := auditLog.Since(from, audit.On("pods", f.Namespace, "placed", "binding"))
				framework.ExpectNoError(err, "read the bindings from the audit log")
				ev["bindingRequests"] = len(bindings)
			}
			framework.Evidence("bypass", ev)
		})
})
