package controllers

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/onsi/ginkgo/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/audit"
	"github.com/kubeproof/kubeproof/kube/observe"
)

const (
	specScale    = "controllers-scale"
	specCascade  = "controllers-cascade"
	specRollout  = "controllers-rollout"
	specRecreate = "controllers-recreate"
)

var _ = ginkgo.Describe("Deployment lifecycle", func() {
	f := framework.New("lifecycle")

	ginkgo.It("desired state: the Pods follow the replica count, and a deleted Pod comes back",
		framework.Checks(specScale),
		framework.Takes(24),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.PodsReady, framework.PodsCreated)
			w := watchAll(ctx, f)
			create(ctx, f, deployment("scaled", 2))
			w.podsOrStop(ctx, "2 Ready Pods", func(s podState) bool { return s.ready == 2 })

			ginkgo.By("kubectl scale --replicas=4")
			kubectl(ctx, f, "scale", "deployment/scaled", "--replicas=4")
			up, upOK := w.podsWithin(ctx, "4 Ready Pods", framework.Timeout.PodStart, func(s podState) bool { return s.ready == 4 })
			scaleUp.Record(scaleUpEvidence{Ready: up.ready, ReplicaSet: w.replicaSetReplicas(ctx)})
			w.stopUnless(upOK, "the Deployment scaled up to 4 Ready Pods", up)

			ginkgo.By("kubectl scale --replicas=1")
			kubectl(ctx, f, "scale", "deployment/scaled", "--replicas=1")
			down, downOK := w.podsWithin(ctx, "1 Pod left", framework.Timeout.PodStart, func(s podState) bool { return s.existing == 1 && s.ready == 1 })
			scaleDown.Record(scaleDownEvidence{Pods: down.existing, ReplicaSet: w.replicaSetReplicas(ctx)})
			w.stopUnless(downOK, "the Deployment scaled down to 1 Pod", down)

			ginkgo.By("deleting the last Pod")
			victim := down.names[0]
			framework.ExpectNoError(f.Client.CoreV1().Pods(f.Namespace).Delete(ctx, victim, metav1.DeleteOptions{}), "delete Pod %s", victim)
			healed, _ := w.podsWithin(ctx, "a new Ready Pod in place of "+victim, framework.Timeout.PodStart, func(s podState) bool {
				return s.ready == 1 && !slices.Contains(s.names, victim)
			})
			selfHeal.Record(selfHealEvidence{Recreated: len(healed.names) > 0 && !slices.Contains(healed.names, victim), Ready: healed.ready})
		})

	ginkgo.It("cascading deletion: background removes dependents, foreground waits for them, orphan keeps them",
		framework.Checks(specCascade, framework.Uses(cluster.AuditLog)),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.PodsCreated)
			auditLog, from := f.AuditLog()
			w := watchAll(ctx, f)
			for _, name := range []string{"background", "foreground", "orphan"} {
				create(ctx, f, deployment(name, 1))
			}
			// Without a garbage collector the deletion finalizers stay, and
			// so would the namespace: take them off when the spec ends.
			ginkgo.DeferCleanup(func(ctx context.Context) {
				for _, name := range []string{"foreground", "orphan"} {
					_, _ = f.Client.AppsV1().Deployments(f.Namespace).Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
				}
			})
			w.podsOrStop(ctx, "a Pod of each Deployment", func(s podState) bool { return s.existing == 3 })

			ginkgo.By("kubectl delete deployment background (kubectl's default: background)")
			kubectl(ctx, f, "delete", "deployment", "background", "--wait=false")
			bg := w.dependentsGone(ctx, "background")
			if auditLog != nil {
				deletes, err := auditLog.Since(from, audit.All(audit.Verbs("delete"), func(e audit.Event) bool {
					return e.ObjectRef != nil && e.ObjectRef.Namespace == f.Namespace && e.ObjectRef.Resource == "replicasets"
				}))
				framework.ExpectNoError(err, "read the ReplicaSet deletions from the audit log")
				for _, d := range deletes {
					bg.ReplicaSetsDeletedBy = append(bg.ReplicaSetsDeletedBy, d.User.Username)
				}
			}
			background.Record(bg)

			ginkgo.By("deleting foreground: the Deployment stays, marked, until its dependents are gone")
			fg := metav1.DeletePropagationForeground
			framework.ExpectNoError(f.Client.AppsV1().Deployments(f.Namespace).Delete(ctx, "foreground", metav1.DeleteOptions{PropagationPolicy: &fg}), "delete foreground")
			foreground.Record(w.foregroundDeletion(ctx, "foreground"))

			ginkgo.By("deleting orphan: its ReplicaSet and Pod stay, without an owner")
			orphanPolicy := metav1.DeletePropagationOrphan
			framework.ExpectNoError(f.Client.AppsV1().Deployments(f.Namespace).Delete(ctx, "orphan", metav1.DeleteOptions{PropagationPolicy: &orphanPolicy}), "delete orphan")
			orphan.Record(w.orphaned(ctx, "orphan"))
			if !bg.RSGone || !bg.PodsGone {
				framework.Unmet("kube-controller-manager", "the garbage collector deleted the dependents of a deleted Deployment",
					fmt.Sprintf("%d ReplicaSets and %d Pods still there %s after the delete", bg.ReplicaSetsRemaining, bg.PodsRemaining, framework.Timeout.Controller))
			}
			framework.Saw("kube-controller-manager", "the garbage collector deleted a deleted Deployment's ReplicaSet and Pods")
		})

	ginkgo.It("rolling update within maxSurge and maxUnavailable, revisions, rollout undo and revisionHistoryLimit",
		framework.Checks(specRollout, framework.Uses(cluster.AuditLog)),
		framework.Takes(68),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.PodsReady, framework.PodsCreated)
			auditLog, _ := f.AuditLog()
			w := watchAll(ctx, f)
			kubeEvents := f.RecordEvents(ctx)
			create(ctx, f, deployment(deploymentName, 3))
			w.completeOrStop(ctx, deploymentName)
			firstRS := w.currentReplicaSet(ctx, deploymentName)

			ginkgo.By("changing the Pod template: kubectl set env")
			from, _ := markAudit(auditLog)
			start, podStart, eventStart := len(w.rs.Events()), len(w.pod.Events()), len(kubeEvents.Events())
			kubectl(ctx, f, "set", "env", "deployment/"+deploymentName, "ROLLOUT=2")
			// maxSurge and maxUnavailable are the defaults (25%): for 3
			// replicas 1 Pod more and none fewer.
			ev := rolloutEvidence{Completed: w.complete(ctx, deploymentName), Replicas: 3}
			rolloutBounds(&ev, w.rs.Events(), start, w.pod.Events(), podStart)
			if ev.Completed {
				secondRS := w.currentReplicaSet(ctx, deploymentName)
				ev.NewReplicaSet, ev.OldScaledDown = secondRS.Name != firstRS.Name, w.replicas(ctx, firstRS.Name) == 0
				ev.OldRevision = firstRS.Annotations["deployment.kubernetes.io/revision"]
				ev.NewRevision = secondRS.Annotations["deployment.kubernetes.io/revision"]
			}
			rollout.Record(ev)
			recordRolloutSteps(ctx, w.rs.Events(), start, kubeEvents, eventStart, deploymentName)
			if auditLog != nil {
				updates, err := auditLog.Since(from, audit.All(audit.By(deploymentController), audit.Verbs("update", "patch"), func(e audit.Event) bool {
					return e.ObjectRef != nil && e.ObjectRef.Resource == "replicasets" && e.ObjectRef.Namespace == f.Namespace
				}))
				framework.ExpectNoError(err, "read the ReplicaSet updates from the audit log")
				reconciles.Record(reconcilesEvidence{ReplicaSetUpdates: len(updates)})
			}
			if !ev.Completed {
				framework.Unmet("kube-controller-manager", "the Deployment rolled out its new template", "not complete within "+framework.Timeout.Rollout.String())
			}

			ginkgo.By("kubectl rollout undo")
			kubectl(ctx, f, "rollout", "undo", "deployment/"+deploymentName)
			w.completeOrStop(ctx, deploymentName)
			undone := w.currentReplicaSet(ctx, deploymentName)
			all, err := f.Client.AppsV1().ReplicaSets(f.Namespace).List(ctx, metav1.ListOptions{})
			framework.ExpectNoError(err, "list ReplicaSets")
			undo.Record(undoEvidence{BackToFirstTemplate: undone.Name == firstRS.Name, Revision: undone.Annotations["deployment.kubernetes.io/revision"], ReplicaSets: len(all.Items)})

			ginkgo.By("revisionHistoryLimit 1, then another rollout: the oldest ReplicaSet is pruned")
			kubectl(ctx, f, "patch", "deployment/"+deploymentName, "--type=merge", "-p", `{"spec":{"revisionHistoryLimit":1}}`)
			kubectl(ctx, f, "set", "env", "deployment/"+deploymentName, "ROLLOUT=3")
			w.completeOrStop(ctx, deploymentName)
			events, _ := framework.Await(ctx, w.rs, "at most 2 ReplicaSets (1 old + the current)", framework.Timeout.Controller, func(es []observe.Event) bool {
				return len(latestReplicaSets(es)) <= 2
			})
			history.Record(historyEvidence{ReplicaSetsLeft: len(latestReplicaSets(events)), Limit: 1})
		})

	ginkgo.It("Recreate: all old Pods are gone before a new one is created",
		framework.Checks(specRecreate),
		framework.Takes(23),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.PodsReady, framework.PodsCreated)
			w := watchAll(ctx, f)
			d := deployment("recreated", 2)
			d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
			create(ctx, f, d)
			w.completeOrStop(ctx, "recreated")
			old := w.podsOrStop(ctx, "2 Ready Pods", func(s podState) bool { return s.ready == 2 })
			start := len(w.pod.Events())
			kubectl(ctx, f, "set", "env", "deployment/recreated", "ROLLOUT=2")
			w.completeOrStop(ctx, "recreated")
			// An old Pod is gone once its containers stopped (or its object
			// went), whichever the watch shows first.
			stopped := map[string]time.Time{}
			firstNew := time.Time{}
			for _, e := range w.pod.Events()[start:] {
				p := framework.PodOf(e)
				if p == nil {
					continue
				}
				isOld := slices.Contains(old.names, p.Name)
				switch {
				case isOld && stopped[p.Name].IsZero() && (e.Type == watch.Deleted || containersStopped(p)):
					stopped[p.Name] = e.Received
				case !isOld && e.Type == watch.Added && firstNew.IsZero():
					firstNew = e.Received
				}
			}
			lastStopped := time.Time{}
			for _, t := range stopped {
				if t.After(lastStopped) {
					lastStopped = t
				}
			}
			recreate.Record(recreateEvidence{
				OldStopped:       len(stopped),
				OldGoneBeforeNew: len(stopped) == len(old.names) && !firstNew.IsZero() && lastStopped.Before(firstNew),
				GapMs:            framework.Millis(firstNew.Sub(lastStopped)),
			})
		})
})

// rolloutBounds computes, from the template change on, the extremes of what
// maxSurge and maxUnavailable bound: the Pods the ReplicaSets ask for, the
// Pods that exist (not terminating, from the Pod watch) and the Pods the
// ReplicaSets report available. Events before the change give the state the
// rollout began from.
func rolloutBounds(ev *rolloutEvidence, rsEvents []observe.Event, rsStart int, podEvents []observe.Event, podStart int) {
	state := latestReplicaSets(rsEvents[:rsStart])
	maxDesired, minAvailable := int32(0), int32(1<<30)
	for _, e := range rsEvents[rsStart:] {
		rs, ok := e.Object.(*appsv1.ReplicaSet)
		if !ok {
			continue
		}
		if e.Type == watch.Deleted {
			delete(state, rs.Name)
		} else {
			state[rs.Name] = rs
		}
		var desired, available int32
		for _, r := range state {
			desired += *r.Spec.Replicas
			available += r.Status.AvailableReplicas
		}
		maxDesired, minAvailable = max(maxDesired, desired), min(minAvailable, available)
	}
	maxPods := 0
	for i := podStart; i < len(podEvents); i++ {
		maxPods = max(maxPods, podsNow(podEvents[:i+1]).existing)
	}
	ev.MaxDesired, ev.MaxPods, ev.MinAvailable = maxDesired, maxPods, minAvailable
	// The bounds are the Deployment controller's, on the ReplicaSets it
	// scales: what they ask for, and what they report available. The Pods
	// that exist can outnumber that for a moment (a scaled-down
	// ReplicaSet's controller has not yet marked its Pod for deletion when
	// the other's creates one); that is PodsWithinBounds, shown beside it.
	ev.WithinBounds = maxDesired <= ev.Replicas+1 && minAvailable >= ev.Replicas
	ev.PodsWithinBounds = int32(maxPods) <= ev.Replicas+1
}

// containersStopped reports whether every container of p has terminated.
func containersStopped(p *corev1.Pod) bool {
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return true
	}
	if len(p.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Terminated == nil {
			return false
		}
	}
	return true
}

func markAudit(l *audit.Log) (audit.Offset, error) {
	if l == nil {
		return 0, nil
	}
	return l.Mark()
}
