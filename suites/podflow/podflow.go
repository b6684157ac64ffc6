// Package podflow observes what happens between `kubectl apply -f pod.yaml`
// and a running Pod whose status is reported back, and what deleting it does:
// the flow seeds 000, 002, 003 and 004 describe.
//
// The specs observe and record evidence; the claims catalog says what each
// document claims about it, and the judge compares. Each step's evidence is
// recorded as soon as it is observed, so that a component that does not act
// (no scheduler, say) refutes the claims about it, and the claims about the
// later steps are not checkable, naming the step that did not happen.
package podflow

import (
	"bytes"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/observe"
)

const podName = "web"

// The specs of this package.
const (
	specCreate       = "podflow-create"
	specStatusWindow = "podflow-status-window"
	specDelete       = "podflow-delete"
	specTiming       = "podflow-timing"
)

var _ = ginkgo.Describe("Pod creation flow", func() {
	f := framework.New("podflow")

	ginkgo.It("kubectl apply -f pod.yaml: the Pod is stored, bound, run, Ready and reported back",
		framework.Checks(specCreate, framework.Uses(cluster.AuditLog), framework.Uses(cluster.EtcdAccess), framework.Uses(cluster.NodeExec)),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.ServiceAccounts, framework.Images)
			auditLog, from := f.AuditLog()
			if auditLog != nil {
				// The scheduler's watch began when it started, before this spec.
				recordSchedulerWatch(auditLog)
			}
			pods := f.RecordPods(ctx)
			podEvents := f.RecordEvents(ctx)

			recordKubectlLog(f, apply(ctx, f, podName).log)

			ginkgo.By("the Pod is stored: its first state")
			first := framework.AwaitPod(ctx, pods, podName, "the Pod's creation event", framework.Timeout.API, func(*corev1.Pod) bool { return true })
			gomega.Expect(first.OK).To(gomega.BeTrue(), "kubectl created the Pod, but no watch event arrived: %s", first.LastSeen())
			gomega.Expect(first.Events[first.Index].Type).To(gomega.Equal(watch.Added), "the Pod's first event")
			s := first.Pod
			stored.Record(storedEvidence{Phase: string(s.Status.Phase), NodeName: s.Spec.NodeName, HasUID: s.UID != "",
				HasResourceVersion: s.ResourceVersion != "", HasCreationTimestamp: !s.CreationTimestamp.IsZero()})
			if auditLog != nil {
				recordCreateRequest(ctx, f, auditLog, from)
			}
			db := f.Etcd()
			if db != nil {
				recordEtcdEvidence(ctx, f, db)
			}

			ginkgo.By("the Pod is bound to a node")
			b := framework.AwaitPod(ctx, pods, podName, "the Pod to be bound to a node", framework.Timeout.Bind, func(p *corev1.Pod) bool { return p.Spec.NodeName != "" })
			ev := boundEvidence{Bound: b.OK, WindowSeconds: framework.Timeout.Bind.Seconds(), LastSeen: b.LastSeen()}
			if b.Pod != nil {
				ev.PodScheduled = conditionStatus(framework.PodCondition(b.Pod, corev1.PodScheduled))
			}
			if b.OK {
				_, err := f.Client.CoreV1().Nodes().Get(ctx, b.Pod.Spec.NodeName, metav1.GetOptions{})
				ev.NodeExists = err == nil
			}
			bound.Record(ev)
			if !b.OK {
				framework.Unmet("kube-scheduler", "the Pod was bound to a node", "not bound within "+framework.Timeout.Bind.String()+"; last seen: "+b.LastSeen())
			}
			framework.Saw("kube-scheduler", "bound the Pod of pod.yaml to a node")
			node := b.Pod.Spec.NodeName
			recordSchedulerEvent(ctx, podEvents, podName)
			if auditLog != nil {
				recordBinding(ctx, f, auditLog, from, node)
			}

			ginkgo.By("the container runs")
			r := framework.AwaitPod(ctx, pods, podName, "the Pod's container to run", framework.Timeout.PodStart, func(p *corev1.Pod) bool {
				return p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].State.Running != nil
			})
			rev := runningEvidence{Running: r.OK, LastSeen: r.LastSeen()}
			if r.OK {
				cs := r.Pod.Status.ContainerStatuses[0]
				rev.Runtime, _, _ = strings.Cut(cs.ContainerID, "://")
				rev.Phase, rev.ContainerRunning, rev.RestartCount = string(r.Pod.Status.Phase), true, cs.RestartCount
				rev.HasPodIP, rev.StartedAtSet = r.Pod.Status.PodIP != "", !cs.State.Running.StartedAt.IsZero()
			} else if r.Pod != nil {
				rev.Phase = string(r.Pod.Status.Phase)
			}
			running.Record(rev)
			if !r.OK {
				framework.Unmet("kubelet", "the Pod's container was started", "not running within "+framework.Timeout.PodStart.String()+"; last seen: "+r.LastSeen())
			}
			framework.Saw("kubelet", "ran the container of the Pod of pod.yaml (runtime %s)", rev.Runtime)
			recordKubeletConnections(ctx, f, node)

			ginkgo.By("the Pod turns Ready")
			rd := framework.ReadyPod(ctx, pods, podName)
			recordReady(rd.Pod)
			recordFieldManagers(pods.Events(), podName)
			order.Record(orderEvidence{StoredBeforeBound: first.Index < b.Index, BoundBeforeRunning: b.Index < r.Index, RunningBeforeReady: r.Index <= rd.Index})

			ginkgo.By("kubectl get pods shows the reported status")
			res, err := f.Kubectl.Run(ctx, nil, "get", "pods", "--namespace", f.Namespace, "--no-headers")
			framework.ExpectNoError(err, "run kubectl get pods")
			gomega.Expect(res.ExitCode).To(gomega.Equal(0), res.String())
			kubectlGet.Record(kubectlGetColumns(res.Stdout, podName))

			ginkgo.By("the events tell the same story")
			evs, _ := framework.Await(ctx, podEvents, "the Scheduled and Started events", framework.Timeout.API, func(es []observe.Event) bool {
				return framework.FindEvent(es, podName, "Started") != nil && framework.FindEvent(es, podName, "Scheduled") != nil
			})
			reasons := framework.EventReasons(evs, podName)
			eev := eventsEvidence{Reasons: reasons, InOrder: inOrder(reasons, "Scheduled", "Created", "Started"),
				WithImageInOrder: inOrder(reasons, "Scheduled", "Pulled", "Created", "Started")}
			if e := framework.FindEvent(evs, podName, "Scheduled"); e != nil {
				eev.ScheduledMessage = f.Generalize(e.Message, map[string]string{node: "{node}", podName: "{name}"})
			}
			events.Record(eev)
			// The image is loaded into the node (Pulled: "already present"):
			// what a download does is the pull spec's (kubelet-pull).

			if auditLog != nil {
				recordStatusWrites(ctx, f, auditLog, from, node)
			}
			if db != nil {
				recordEtcdFinal(ctx, f, db)
			}
		})

	ginkgo.It("observes how often the kubelet reports a Running Pod's status",
		framework.Checks(specStatusWindow, framework.Uses(cluster.AuditLog)),
		framework.Takes(33),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.PodsReady)
			pods := f.RecordPods(ctx)
			apply(ctx, f, podName)
			rd := framework.ReadyPod(ctx, pods, podName)
			leases := f.RecordLease(ctx, rd.Pod.Spec.NodeName)
			auditLog, from := f.AuditLog()

			// An observation window, not a synchronisation: how many status
			// writes does a Pod whose state does not change get?
			const window = 25 * time.Second
			ginkgo.By("watching the Ready Pod and its node's Lease for " + window.String())
			before := len(pods.Events())
			beforeLease := len(leases.Events())
			framework.ObserveFor(ctx, window)
			statusWindow.Record(statusWindowEvidence{
				WindowSeconds:     window.Seconds(),
				PodUpdates:        len(pods.Events()) - before,
				NodeLeaseRenewals: len(leases.Events()) - beforeLease,
			})
			if auditLog == nil {
				kubeletReads.Unobservable("%s", f.Missing(cluster.AuditLog))
				return
			}
			recordKubeletReads(auditLog, from, rd.Pod.Spec.NodeName, f.Namespace, podName, window)
		})

	ginkgo.It("kubectl delete -f pod.yaml: the containers stop, the object is removed, and it can be applied again",
		framework.Checks(specDelete),
		framework.Takes(21),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.PodsReady)
			pods := f.RecordPods(ctx)
			apply(ctx, f, podName)
			framework.ReadyPod(ctx, pods, podName)

			ginkgo.By("kubectl delete -f pod.yaml")
			begin := time.Now()
			res, err := f.Kubectl.Run(ctx, bytes.NewReader(framework.Manifest("pod.yaml")), "delete", "-f", "-", "--namespace", f.Namespace)
			framework.ExpectNoError(err, "run kubectl delete")
			gomega.Expect(res.ExitCode).To(gomega.Equal(0), res.String())

			// kubectl delete waits for the object to go (its default --wait).
			deletion := func(es []observe.Event) int {
				return slices.IndexFunc(es, func(e observe.Event) bool {
					p := framework.PodOf(e)
					return p != nil && p.Name == podName && e.Type == watch.Deleted
				})
			}
			goneEvents, _ := framework.Await(ctx, pods, "the Pod's deletion event", framework.Timeout.API, func(es []observe.Event) bool { return deletion(es) >= 0 })
			iDeleted := deletion(goneEvents)
			_, getErr := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, podName, metav1.GetOptions{})
			dev := deletedEvidence{NotFoundAfter: apierrors.IsNotFound(getErr), DeletionEventSeen: iDeleted >= 0}
			var last *corev1.Pod
			if iDeleted >= 0 {
				last = framework.PodOf(goneEvents[iDeleted])
				n := 0
				for _, cs := range last.Status.ContainerStatuses {
					if cs.State.Running != nil {
						n++
					}
				}
				dev.RunningWhenRemoved = &n
				dev.GracefulMark = last.DeletionTimestamp != nil
				dev.DeleteToRemovedMs = framework.Millis(goneEvents[iDeleted].Received.Sub(begin))
				dev.LastStateBeforeRemove = framework.DescribePod(last)
			}
			deleted.Record(dev)
			gomega.Expect(last).NotTo(gomega.BeNil(), "kubectl delete returned, but the watch saw no deletion of the Pod")

			ginkgo.By("applying the same manifest again")
			again := apply(ctx, f, podName)
			rd := framework.AwaitPod(ctx, pods, podName, "the re-applied Pod to be Ready", framework.Timeout.PodStart, func(p *corev1.Pod) bool {
				return p.UID != last.UID && framework.PodReady(p)
			})
			rev := reappliedEvidence{Ready: rd.OK, LastSeen: rd.LastSeen()}
			if rd.OK {
				// Read from the object the watch delivered: Ready, and a new
				// object (another UID), not the deleted one seen again.
				rev.NewObject = rd.Pod.UID != last.UID
				rev.ApplyToReadyMs = framework.Millis(rd.At.Sub(again.began))
			}
			reapplied.Record(rev)
		})

	ginkgo.It("kubectl apply -f pod.yaml, five times, then with images to download: how long each step takes (median and spread)",
		framework.Checks(specTiming, framework.Uses(cluster.AuditLog), framework.Uses(cluster.RegistryPull)),
		framework.Takes(70),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.PodsReady)
			measureTimings(ctx, f)
		})
})

// recordReady records the Ready Pod: its true conditions and container.
func recordReady(p *corev1.Pod) {
	ev := readyEvidence{Ready: framework.PodReady(p), Phase: string(p.Status.Phase)}
	for _, c := range p.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			ev.ConditionsTrue = append(ev.ConditionsTrue, string(c.Type))
		}
	}
	if len(p.Status.ContainerStatuses) > 0 {
		ev.ContainerReady, ev.RestartCount = p.Status.ContainerStatuses[0].Ready, p.Status.ContainerStatuses[0].RestartCount
	}
	ready.Record(ev)
}

func conditionStatus(c *corev1.PodCondition) string {
	if c == nil {
		return ""
	}
	return string(c.Status)
}

// kubectlGetColumns parses the row of name in `kubectl get pods --no-headers`.
func kubectlGetColumns(out, name string) kubectlGetEvidence {
	for _, line := range strings.Split(out, "\n") {
		cols := strings.Fields(line)
		if len(cols) >= 4 && cols[0] == name {
			return kubectlGetEvidence{Ready: cols[1], Status: cols[2], Restarts: cols[3]}
		}
	}
	return kubectlGetEvidence{Output: out}
}

// inOrder reports whether want appear in reasons in this order.
func inOrder(reasons []string, want ...string) bool {
	i := 0
	for _, r := range reasons {
		if i < len(want) && r == want[i] {
			i++
		}
	}
	return i == len(want)
}
