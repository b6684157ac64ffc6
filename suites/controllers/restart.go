package controllers

import (
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/audit"
	"github.com/kubeproof/kubeproof/kube/observe"
)

// The spec of this file. It stops the controller manager, which every
// other spec needs: it runs alone.
const specRestart = "controllers-restart"

var _ = ginkgo.Describe("Controller manager restart", ginkgo.Serial, func() {
	f := framework.New("restart")

	ginkgo.It("changes made while the controller manager is stopped are acted on once it is back, from the state it reads again",
		framework.Checks(specRestart, framework.Uses(cluster.AuditLog)),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.PodsReady)
			w := watchAll(ctx, f)
			create(ctx, f, deployment("level", 2))
			w.completeOrStop(ctx, "level")
			start := f.StopComponent(ctx, "kube-controller-manager")
			stopped := time.Now()

			ginkgo.By("while it is stopped: one of the Deployment's Pods deleted, the Deployment scaled to 3")
			pods, err := f.Client.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{})
			framework.ExpectNoError(err, "list the Deployment's Pods")
			if len(pods.Items) == 0 {
				framework.Unmet("kube-controller-manager", "the Deployment had Pods before the stop", "none listed")
			}
			framework.ExpectNoError(f.Client.CoreV1().Pods(f.Namespace).Delete(ctx, pods.Items[0].Name, metav1.DeleteOptions{}), "delete a Pod")
			_, err = f.Client.AppsV1().Deployments(f.Namespace).Patch(ctx, "level", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{})
			framework.ExpectNoError(err, "scale the Deployment to 3")
			// A window that measures absence: with no controller manager,
			// nothing may replace the Pod or scale the ReplicaSet.
			const window = 5 * time.Second
			framework.ObserveFor(ctx, window)
			ev := restartEvidence{StoppedSeconds: window.Seconds(), PodsCreatedWhileStopped: added(w.pod.Events(), stopped)}
			d, err := f.Client.AppsV1().Deployments(f.Namespace).Get(ctx, "level", metav1.GetOptions{})
			framework.ExpectNoError(err, "read the Deployment")
			ev.ObservedWhileStopped = d.Status.ObservedGeneration >= d.Generation

			log, mark := f.AuditLog()
			restarted := time.Now()
			if err := start(ctx); err != nil {
				framework.Unmet("kube-controller-manager", "the controller manager started again", err.Error())
			}
			ev.ConvergedAfterRestart = w.complete(ctx, "level")
			if ev.ConvergedAfterRestart {
				ev.ConvergedAfterMs = framework.Millis(time.Since(restarted))
			}
			ev.PodsCreatedAfterRestart = added(w.pod.Events(), restarted)
			restart.Record(ev)

			if log == nil {
				relist.Unobservable("%s", f.Missing(cluster.AuditLog))
				return
			}
			reads, err := log.Since(mark, audit.Verbs("list", "watch"))
			framework.ExpectNoError(err, "read the audit log since the restart")
			r := firstRead(reads, controllerManager, "deployments")
			if r.FirstRequest == "" {
				relist.Unobservable("the audit log has no list or watch of deployments by %s since the restart", controllerManager)
				return
			}
			relist.Record(r)
		})
})

// added counts the Pods first seen (Added) at or after since.
func added(events []observe.Event, since time.Time) int {
	n := 0
	for _, e := range events {
		if e.Type == watch.Added && !e.Received.Before(since) {
			if _, ok := e.Object.(*corev1.Pod); ok {
				n++
			}
		}
	}
	return n
}

// Evidence: what the specs above record, under the names the claims files use.

// A Deployment changed while the controller manager was stopped, and what
// happened once it was back.
type restartEvidence struct {
	// StoppedSeconds is how long the window with the controller manager
	// stopped lasted.
	StoppedSeconds float64 `json:"stoppedSeconds"`
	// PodsCreatedWhileStopped counts Pods created in the window (none is
	// expected: nobody runs the ReplicaSet controller).
	PodsCreatedWhileStopped int `json:"podsCreatedWhileStopped"`
	// ObservedWhileStopped: the Deployment's status caught up with the
	// scale during the window.
	ObservedWhileStopped bool `json:"observedWhileStopped"`
	// ConvergedAfterRestart: the Deployment's rollout was complete within
	// Timeout.Rollout of the restart; ConvergedAfterMs is how long that took.
	ConvergedAfterRestart bool    `json:"convergedAfterRestart"`
	ConvergedAfterMs      float64 `json:"convergedAfterMs"`
	// PodsCreatedAfterRestart counts Pods created after the restart.
	PodsCreatedAfterRestart int `json:"podsCreatedAfterRestart"`
}

var (
	restart = framework.DeclareEvidence[restartEvidence]("restart", specRestart)
	relist  = framework.DeclareEvidence[informerEvidence]("relist", specRestart)
)
