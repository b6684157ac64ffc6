// Package podflow checks seed 000_9d571b7144dc736e.txt ("Pod 생성 흐름"): what
// happens between `kubectl apply -f pod.yaml` and a running Pod whose status
// is reported back, and what deleting it does.
//
// Every step is observed on a watch started before the apply, so the checks
// see each state the Pod went through, in order.
package podflow

import (
	"bytes"
	"context"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/observe"
)

const podName = "web"

var _ = ginkgo.Describe("Pod creation flow (seed 000)", func() {
	f := framework.New("podflow")

	ginkgo.It("stores the Pod unscheduled, binds it to a node, runs it and reports it Ready",
		ginkgo.Label("claim:POD-PENDING", "claim:POD-BOUND", "claim:POD-RUNNING", "claim:POD-READY", "claim:POD-STATUS"),
		func(ctx ginkgo.SpecContext) {
			rec := f.RecordPods(ctx)
			apply(ctx, f)

			ginkgo.By("the Pod is stored first: Pending, on no node")
			iCreated, created, _ := framework.WaitForPodEvent(ctx, rec, "the Pod's creation event", func(e observe.Event, p *corev1.Pod) bool {
				return e.Type == watch.Added && p.Name == podName
			})
			framework.Evidence("stored", map[string]any{
				"phase": created.Status.Phase, "nodeName": created.Spec.NodeName, "uid": created.UID,
				"resourceVersion": created.ResourceVersion, "creationTimestamp": created.CreationTimestamp.UTC(),
			})
			gomega.Expect(created.Spec.NodeName).To(gomega.BeEmpty(), "the first stored state already names a node: %s", framework.DescribePod(created))
			gomega.Expect(created.Status.Phase).To(gomega.Equal(corev1.PodPending), framework.DescribePod(created))

			ginkgo.By("the scheduler binds it to a node")
			iBound, bound, _ := framework.WaitForPodEvent(ctx, rec, "the Pod to be bound to a node", func(_ observe.Event, p *corev1.Pod) bool {
				return p.Spec.NodeName != ""
			})
			node, err := f.Client.CoreV1().Nodes().Get(ctx, bound.Spec.NodeName, metav1.GetOptions{})
			gomega.Expect(err).NotTo(gomega.HaveOccurred(), "the Pod is bound to node %q, which must exist", bound.Spec.NodeName)
			scheduled := framework.PodCondition(bound, corev1.PodScheduled)
			framework.Evidence("bound", map[string]any{"nodeName": node.Name, "podScheduled": scheduled, "resourceVersion": bound.ResourceVersion})
			gomega.Expect(scheduled).NotTo(gomega.BeNil(), "a bound Pod has a PodScheduled condition: %s", framework.DescribePod(bound))
			gomega.Expect(scheduled.Status).To(gomega.Equal(corev1.ConditionTrue))

			ginkgo.By("the kubelet has the container runtime start the container")
			iRunning, running, _ := framework.WaitForPodEvent(ctx, rec, "the Pod to run", func(_ observe.Event, p *corev1.Pod) bool {
				return p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].State.Running != nil
			})
			cs := running.Status.ContainerStatuses[0]
			framework.Evidence("running", map[string]any{"containerID": cs.ContainerID, "imageID": cs.ImageID,
				"startedAt": cs.State.Running.StartedAt.UTC(), "podIP": running.Status.PodIP, "hostIP": running.Status.HostIP})
			// The container ID is "<runtime>://<id>": the runtime the kubelet asked.
			gomega.Expect(cs.ContainerID).To(gomega.MatchRegexp(`^[a-z0-9]+://[0-9a-f]+$`))
			gomega.Expect(running.Status.PodIP).NotTo(gomega.BeEmpty(), framework.DescribePod(running))

			ginkgo.By("the Pod turns Ready once its readiness probe passes")
			iReady, ready, events := framework.WaitForPodEvent(ctx, rec, "the Pod to be Ready", func(_ observe.Event, p *corev1.Pod) bool {
				return framework.PodReady(p)
			})
			framework.Evidence("ready", map[string]any{"conditions": ready.Status.Conditions})

			ginkgo.By("the states arrived in the documented order")
			order := map[string]any{}
			for name, i := range map[string]int{"stored": iCreated, "bound": iBound, "running": iRunning, "ready": iReady} {
				order[name] = map[string]any{"event": i, "afterStored": events[i].Received.Sub(events[iCreated].Received).String()}
			}
			framework.Evidence("order", order)
			gomega.Expect(iCreated).To(gomega.BeNumerically("<", iBound), "stored before bound")
			gomega.Expect(iBound).To(gomega.BeNumerically("<", iRunning), "bound before running")
			gomega.Expect(iRunning).To(gomega.BeNumerically("<=", iReady), "running before (or when) Ready")

			ginkgo.By("the status is reported back: kubectl get pods shows it Running and Ready")
			res, err := f.Kubectl.Run(ctx, nil, "get", "pods", "--namespace", f.Namespace, "--no-headers")
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			framework.Evidence("kubectl-get-pods", res.Stdout)
			gomega.Expect(res.ExitCode).To(gomega.Equal(0), res.String())
			gomega.Expect(res.Stdout).To(gomega.MatchRegexp(`(?m)^`+podName+`\s+1/1\s+Running\s+0\s`), res.String())
		})

	ginkgo.It("deletes the Pod: its containers stop and the object is removed",
		ginkgo.Label("claim:POD-DELETE"),
		func(ctx ginkgo.SpecContext) {
			rec := f.RecordPods(ctx)
			apply(ctx, f)
			framework.WaitForPodEvent(ctx, rec, "the Pod to be Ready", func(_ observe.Event, p *corev1.Pod) bool {
				return framework.PodReady(p)
			})

			ginkgo.By("kubectl delete -f pod.yaml")
			begin := time.Now()
			res, err := f.Kubectl.Run(ctx, bytes.NewReader(fixtures.MustRead("pod.yaml")), "delete", "-f", "-", "--namespace", f.Namespace)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			gomega.Expect(res.ExitCode).To(gomega.Equal(0), res.String())

			iDeleted, _, events := framework.WaitForPodEvent(ctx, rec, "the Pod to be deleted", func(e observe.Event, _ *corev1.Pod) bool {
				return e.Type == watch.Deleted
			})
			// The last state before removal: the kubelet stopped the container
			// and only then was the object removed.
			last := framework.PodOf(events[iDeleted])
			framework.Evidence("deleted", map[string]any{"kubectl": res.Stdout, "after": time.Since(begin).String(),
				"deletionTimestamp": last.DeletionTimestamp, "lastState": framework.DescribePod(last)})
			gomega.Expect(last.DeletionTimestamp).NotTo(gomega.BeNil(), "graceful deletion marks the Pod first")
			for _, cs := range last.Status.ContainerStatuses {
				gomega.Expect(cs.State.Running).To(gomega.BeNil(), "container %s still running when the Pod was removed: %s", cs.Name, framework.DescribePod(last))
			}
			_, err = f.Client.CoreV1().Pods(f.Namespace).Get(ctx, podName, metav1.GetOptions{})
			gomega.Expect(apierrors.IsNotFound(err)).To(gomega.BeTrue(), "GET after deletion: %v", err)
		})
})

// apply runs `kubectl apply -f pod.yaml` in the spec's namespace.
func apply(ctx context.Context, f *framework.Framework) {
	ginkgo.By("kubectl apply -f pod.yaml")
	res, err := f.Kubectl.Run(ctx, bytes.NewReader(fixtures.MustRead("pod.yaml")), "apply", "-f", "-", "--namespace", f.Namespace)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	framework.Evidence("kubectl-apply", res.String())
	gomega.Expect(res.ExitCode).To(gomega.Equal(0), res.String())
	gomega.Expect(res.Stdout).To(gomega.ContainSubstring("pod/" + podName + " created"))
}
