package controllers

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/audit"
	"github.com/kubeproof/kubeproof/framework/observe"
)

// lifecycleTimeout bounds each wait for controllers to converge.
const lifecycleTimeout = 3 * time.Minute

var _ = ginkgo.Describe("Deployment lifecycle", func() {
	f := framework.New("lifecycle")

	ginkgo.It("desired state: the Pods follow the replica count, and a deleted Pod comes back",
		framework.Checks("controllers-scale", "001-ABSTRACTION", "001-AUTOMATES-RS"),
		func(ctx ginkgo.SpecContext) {
			w := watchAll(ctx, f)
			create(ctx, f, deployment("scaled", 2))
			w.pods(ctx, "2 Ready Pods", func(s podState) bool { return s.ready == 2 })

			ginkgo.By("kubectl scale --replicas=4")
			kubectl(ctx, f, "scale", "deployment/scaled", "--replicas=4")
			up := w.pods(ctx, "4 Ready Pods", func(s podState) bool { return s.ready == 4 })
			rsUp := w.replicaSetReplicas(ctx)

			ginkgo.By("kubectl scale --replicas=1")
			kubectl(ctx, f, "scale", "deployment/scaled", "--replicas=1")
			down := w.pods(ctx, "1 Pod left", func(s podState) bool { return s.existing == 1 && s.ready == 1 })
			rsDown := w.replicaSetReplicas(ctx)

			ginkgo.By("deleting the last Pod")
			victim := down.names[0]
			framework.ExpectNoError(f.Client.CoreV1().Pods(f.Namespace).Delete(ctx, victim, metav1.DeleteOptions{}), "delete Pod %s", victim)
			healed := w.pods(ctx, "a new Ready Pod in place of "+victim, func(s podState) bool {
				return s.ready == 1 && !slices.Contains(s.names, victim)
			})
			framework.Evidence("scale", map[string]any{
				"readyAfterScaleUp": up.ready, "replicaSetAfterScaleUp": rsUp, "podsAfterScaleDown": down.existing,
				"replicaSetAfterScaleDown": rsDown, "recreated": !slices.Contains(healed.names, victim), "readyAfterDelete": healed.ready,
			})
		})

	ginkgo.It("cascading deletion: background removes dependents, foreground waits for them, orphan keeps them",
		framework.Checks("controllers-cascade", "004-CASCADE", "004-GC-GRAPH"),
		func(ctx ginkgo.SpecContext) {
			auditLog, from := f.AuditLog()
			w := watchAll(ctx, f)
			for _, name := range []string{"background", "foreground", "orphan"} {
				create(ctx, f, deployment(name, 1))
			}
			w.pods(ctx, "3 Ready Pods", func(s podState) bool { return s.ready == 3 })

			ginkgo.By("kubectl delete deployment background (kubectl's default: background)")
			kubectl(ctx, f, "delete", "deployment", "background")
			bg := w.gone(ctx, "background")

			ginkgo.By("deleting foreground: the Deployment stays, marked, until its dependents are gone")
			fg := metav1.DeletePropagationForeground
			framework.ExpectNoError(f.Client.AppsV1().Deployments(f.Namespace).Delete(ctx, "foreground", metav1.DeleteOptions{PropagationPolicy: &fg}), "delete foreground")
			w.gone(ctx, "foreground")
			foreground := w.foregroundEvidence(ctx, "foreground")

			ginkgo.By("deleting orphan: its ReplicaSet and Pod stay, without an owner")
			orphanPolicy := metav1.DeletePropagationOrphan
			framework.ExpectNoError(f.Client.AppsV1().Deployments(f.Namespace).Delete(ctx, "orphan", metav1.DeleteOptions{PropagationPolicy: &orphanPolicy}), "delete orphan")
			orphaned := w.orphaned(ctx, "orphan")

			ev := map[string]any{"rsGone": bg.replicaSets == 0, "podsGone": bg.pods == 0}
			if auditLog != nil {
				deletes, err := auditLog.Since(from, audit.All(audit.Verbs("delete"), func(e audit.Event) bool {
					return e.ObjectRef != nil && e.ObjectRef.Namespace == f.Namespace && e.ObjectRef.Resource == "replicasets"
				}))
				framework.ExpectNoError(err, "read the ReplicaSet deletions from the audit log")
				var by []string
				for _, d := range deletes {
					by = append(by, d.User.Username)
				}
				ev["replicaSetsDeletedBy"] = by
			}
			framework.Evidence("background", ev)
			framework.Evidence("foreground", foreground)
			framework.Evidence("orphan", orphaned)
		})

	ginkgo.It("rolling update within maxSurge and maxUnavailable, revisions, rollout undo and revisionHistoryLimit",
		framework.Checks("controllers-rollout", "001-AUTOMATES-ROLLING", "001-ROLLBACK", "004-ROLLING-SURGE", "004-MULTIPLE-RECONCILES"),
		func(ctx ginkgo.SpecContext) {
			auditLog, _ := f.AuditLog()
			w := watchAll(ctx, f)
			create(ctx, f, deployment(deploymentName, 3))
			w.complete(ctx, deploymentName)
			firstRS := w.currentReplicaSet(ctx, deploymentName)

			ginkgo.By("changing the Pod template: kubectl set env")
			from, _ := markAudit(auditLog)
			start, podStart := len(w.rs.Events()), len(w.pod.Events())
			kubectl(ctx, f, "set", "env", "deployment/"+deploymentName, "ROLLOUT=2")
			w.complete(ctx, deploymentName)
			secondRS := w.currentReplicaSet(ctx, deploymentName)
			bounds := rolloutBounds(w.rs.Events(), start, w.pod.Events(), podStart, 3)
			framework.Evidence("rollout", merge(bounds, map[string]any{
				"newReplicaSet":  secondRS.Name != firstRS.Name,
				"oldScaledDown":  w.replicas(ctx, firstRS.Name) == 0,
				"oldRevision":    firstRS.Annotations["deployment.kubernetes.io/revision"],
				"newRevision":    secondRS.Annotations["deployment.kubernetes.io/revision"],
				"maxSurge":       1,
				"maxUnavailable": 0,
			}))
			if auditLog != nil {
				updates, err := auditLog.Since(from, audit.All(audit.By(deploymentController), audit.Verbs("update", "patch"), func(e audit.Event) bool {
					return e.ObjectRef != nil && e.ObjectRef.Resource == "replicasets" && e.ObjectRef.Namespace == f.Namespace
				}))
				framework.ExpectNoError(err, "read the ReplicaSet updates from the audit log")
				framework.Evidence("reconciles", map[string]any{"replicaSetUpdates": len(updates)})
			}

			ginkgo.By("kubectl rollout undo")
			kubectl(ctx, f, "rollout", "undo", "deployment/"+deploymentName)
			w.complete(ctx, deploymentName)
			undone := w.currentReplicaSet(ctx, deploymentName)
			all, err := f.Client.AppsV1().ReplicaSets(f.Namespace).List(ctx, metav1.ListOptions{})
			framework.ExpectNoError(err, "list ReplicaSets")
			framework.Evidence("undo", map[string]any{
				"backToFirstTemplate": undone.Name == firstRS.Name, "revision": undone.Annotations["deployment.kubernetes.io/revision"],
				"replicaSets": len(all.Items),
			})

			ginkgo.By("revisionHistoryLimit 1, then another rollout: the oldest ReplicaSet is pruned")
			kubectl(ctx, f, "patch", "deployment/"+deploymentName, "--type=merge", "-p", `{"spec":{"revisionHistoryLimit":1}}`)
			kubectl(ctx, f, "set", "env", "deployment/"+deploymentName, "ROLLOUT=3")
			w.complete(ctx, deploymentName)
			left := w.replicaSetsUntil(ctx, "at most 2 ReplicaSets (1 old + the current)", func(n int) bool { return n <= 2 })
			framework.Evidence("history", map[string]any{"replicaSetsLeft": left, "limit": 1})
		})

	ginkgo.It("Recreate: all old Pods are gone before a new one is created",
		framework.Checks("controllers-recreate", "004-STRATEGIES"),
		func(ctx ginkgo.SpecContext) {
			w := watchAll(ctx, f)
			d := deployment("recreated", 2)
			d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
			create(ctx, f, d)
			w.complete(ctx, "recreated")
			old := w.pods(ctx, "2 Ready Pods", func(s podState) bool { return s.ready == 2 })
			start := len(w.pod.Events())
			kubectl(ctx, f, "set", "env", "deployment/recreated", "ROLLOUT=2")
			w.complete(ctx, "recreated")
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
			framework.Evidence("recreate", map[string]any{
				"oldStopped":       len(stopped),
				"oldGoneBeforeNew": len(stopped) == len(old.names) && !firstNew.IsZero() && lastStopped.Before(firstNew),
				"gapMs":            framework.Millis(firstNew.Sub(lastStopped)),
			})
		})
})

// watcher records the namespace's Pods, ReplicaSets and Deployments.
type watcher struct {
	f           *framework.Framework
	pod, rs, dp *observe.Recorder
}

func watchAll(ctx context.Context, f *framework.Framework) *watcher {
	ginkgo.GinkgoHelper()
	apps := f.Client.AppsV1().RESTClient()
	return &watcher{
		f:   f,
		pod: f.RecordPods(ctx),
		rs:  f.Record(ctx, "replicasets", cache.NewListWatchFromClient(apps, "replicasets", f.Namespace, fields.Everything())),
		dp:  f.Record(ctx, "deployments", cache.NewListWatchFromClient(apps, "deployments", f.Namespace, fields.Everything())),
	}
}

// podState is the namespace's Pods as the watch last saw them.
type podState struct {
	existing, ready int
	names           []string
}

func podsNow(events []observe.Event) podState {
	latest := map[string]*corev1.Pod{}
	for _, e := range events {
		p := framework.PodOf(e)
		if p == nil {
			continue
		}
		if e.Type == watch.Deleted {
			delete(latest, p.Name)
		} else {
			latest[p.Name] = p
		}
	}
	var s podState
	for name, p := range latest {
		if p.DeletionTimestamp != nil {
			continue
		}
		s.existing++
		s.names = append(s.names, name)
		if framework.PodReady(p) {
			s.ready++
		}
	}
	slices.Sort(s.names)
	return s
}

func (w *watcher) pods(ctx context.Context, what string, ok func(podState) bool) podState {
	ginkgo.GinkgoHelper()
	events, err := w.pod.WaitFor(ctx, lifecycleTimeout, what, func(es []observe.Event) bool { return ok(podsNow(es)) },
		func(observe.Event) string { return fmt.Sprintf("%+v", podsNow(w.pod.Events())) })
	framework.ExpectNoError(err, "wait for %s", what)
	return podsNow(events)
}

// latestReplicaSets is the namespace's ReplicaSets as last seen.
func latestReplicaSets(events []observe.Event) map[string]*appsv1.ReplicaSet {
	out := map[string]*appsv1.ReplicaSet{}
	for _, e := range events {
		rs, ok := e.Object.(*appsv1.ReplicaSet)
		if !ok {
			continue
		}
		if e.Type == watch.Deleted {
			delete(out, rs.Name)
		} else {
			out[rs.Name] = rs
		}
	}
	return out
}

// replicaSetReplicas is the sum of the ReplicaSets' desired replicas.
func (w *watcher) replicaSetReplicas(ctx context.Context) int32 {
	list, err := w.f.Client.AppsV1().ReplicaSets(w.f.Namespace).List(ctx, metav1.ListOptions{})
	framework.ExpectNoError(err, "list ReplicaSets")
	var n int32
	for _, rs := range list.Items {
		n += *rs.Spec.Replicas
	}
	return n
}

func (w *watcher) replicas(ctx context.Context, rsName string) int32 {
	rs, err := w.f.Client.AppsV1().ReplicaSets(w.f.Namespace).Get(ctx, rsName, metav1.GetOptions{})
	framework.ExpectNoError(err, "read ReplicaSet %s", rsName)
	return *rs.Spec.Replicas
}

func (w *watcher) replicaSetsUntil(ctx context.Context, what string, ok func(int) bool) int {
	ginkgo.GinkgoHelper()
	events, err := w.rs.WaitFor(ctx, lifecycleTimeout, what, func(es []observe.Event) bool { return ok(len(latestReplicaSets(es))) }, nil)
	framework.ExpectNoError(err, "wait for %s", what)
	return len(latestReplicaSets(events))
}

// complete waits until a Deployment's rollout is complete: every replica
// updated and available, nothing older left running.
func (w *watcher) complete(ctx context.Context, name string) {
	ginkgo.GinkgoHelper()
	lw := cache.NewFilteredListWatchFromClient(w.f.Client.AppsV1().RESTClient(), "deployments", w.f.Namespace, func(o *metav1.ListOptions) {
		o.FieldSelector = observe.NameSelector(name)
	})
	_, err := observe.Until(ctx, lifecycleTimeout, "Deployment "+name+" to finish its rollout", lw, func(d *appsv1.Deployment) (bool, error) {
		want := *d.Spec.Replicas
		s := d.Status
		return s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want && s.Replicas == want && s.AvailableReplicas == want, nil
	}, func(d *appsv1.Deployment) string {
		return fmt.Sprintf("generation %d observed %d, status %+v", d.Generation, d.Status.ObservedGeneration, d.Status)
	})
	framework.ExpectNoError(err, "wait for the rollout of %s", name)
}

// currentReplicaSet is the ReplicaSet of a Deployment's current template.
func (w *watcher) currentReplicaSet(ctx context.Context, name string) appsv1.ReplicaSet {
	ginkgo.GinkgoHelper()
	d, err := w.f.Client.AppsV1().Deployments(w.f.Namespace).Get(ctx, name, metav1.GetOptions{})
	framework.ExpectNoError(err, "read Deployment %s", name)
	list, err := w.f.Client.AppsV1().ReplicaSets(w.f.Namespace).List(ctx, metav1.ListOptions{})
	framework.ExpectNoError(err, "list ReplicaSets")
	for _, rs := range list.Items {
		if controllerRef(rs.OwnerReferences)["uid"] == string(d.UID) &&
			rs.Annotations["deployment.kubernetes.io/revision"] == d.Annotations["deployment.kubernetes.io/revision"] {
			return rs
		}
	}
	ginkgo.Fail(fmt.Sprintf("no ReplicaSet of %s has its revision %s", name, d.Annotations["deployment.kubernetes.io/revision"]))
	return appsv1.ReplicaSet{}
}

// dependents are the ReplicaSets and Pods of a Deployment (by name prefix).
type dependents struct{ replicaSets, pods int }

// gone waits until a Deployment's ReplicaSets and Pods are all gone (each
// watch in turn: once gone, they stay gone).
func (w *watcher) gone(ctx context.Context, name string) dependents {
	ginkgo.GinkgoHelper()
	prefix := name + "-"
	podsLeft := func(es []observe.Event) int {
		n := 0
		for _, p := range podsNow(es).names {
			if hasPrefix(p, prefix) {
				n++
			}
		}
		return n
	}
	rsLeft := func(es []observe.Event) int {
		n := 0
		for rsName := range latestReplicaSets(es) {
			if hasPrefix(rsName, prefix) {
				n++
			}
		}
		return n
	}
	_, err := w.pod.WaitFor(ctx, lifecycleTimeout, "the Pods of "+name+" to go", func(es []observe.Event) bool { return podsLeft(es) == 0 }, nil)
	framework.ExpectNoError(err, "wait for the Pods of %s to go", name)
	_, err = w.rs.WaitFor(ctx, lifecycleTimeout, "the ReplicaSets of "+name+" to go", func(es []observe.Event) bool { return rsLeft(es) == 0 }, nil)
	framework.ExpectNoError(err, "wait for the ReplicaSets of %s to go", name)
	return dependents{replicaSets: rsLeft(w.rs.Events()), pods: podsLeft(w.pod.Events())}
}

// foregroundEvidence reads how the foreground-deleted Deployment looked:
// was it marked (finalizer, deletionTimestamp) while its ReplicaSet lived,
// and did it go only after the ReplicaSet?
func (w *watcher) foregroundEvidence(ctx context.Context, name string) map[string]any {
	ginkgo.GinkgoHelper()
	events, err := w.dp.WaitFor(ctx, lifecycleTimeout, "Deployment "+name+" to be deleted", func(es []observe.Event) bool {
		for _, e := range es {
			if d, ok := e.Object.(*appsv1.Deployment); ok && d.Name == name && e.Type == watch.Deleted {
				return true
			}
		}
		return false
	}, nil)
	framework.ExpectNoError(err, "wait for the foreground deletion")
	marked, deployGone := false, time.Time{}
	for _, e := range events {
		d, ok := e.Object.(*appsv1.Deployment)
		if !ok || d.Name != name {
			continue
		}
		if d.DeletionTimestamp != nil && slices.Contains(d.Finalizers, metav1.FinalizerDeleteDependents) {
			marked = true
		}
		if e.Type == watch.Deleted {
			deployGone = e.Received
		}
	}
	rsGone := time.Time{}
	for _, e := range w.rs.Events() {
		if rs, ok := e.Object.(*appsv1.ReplicaSet); ok && hasPrefix(rs.Name, name+"-") && e.Type == watch.Deleted {
			rsGone = e.Received
		}
	}
	return map[string]any{"markedWithFinalizer": marked, "ownerGoneAfterDependents": !rsGone.IsZero() && rsGone.Before(deployGone)}
}

// orphaned waits until the orphaned ReplicaSet has no owner, then reports
// what remains.
func (w *watcher) orphaned(ctx context.Context, name string) map[string]any {
	ginkgo.GinkgoHelper()
	events, err := w.rs.WaitFor(ctx, lifecycleTimeout, "the orphaned ReplicaSet to lose its owner", func(es []observe.Event) bool {
		for n, rs := range latestReplicaSets(es) {
			if hasPrefix(n, name+"-") && len(rs.OwnerReferences) == 0 {
				return true
			}
		}
		return false
	}, nil)
	framework.ExpectNoError(err, "wait for the orphaning")
	remaining := 0
	for n := range latestReplicaSets(events) {
		if hasPrefix(n, name+"-") {
			remaining++
		}
	}
	podsLeft, podsOwned := 0, 0
	list, err := w.f.Client.CoreV1().Pods(w.f.Namespace).List(ctx, metav1.ListOptions{})
	framework.ExpectNoError(err, "list Pods")
	for _, p := range list.Items {
		if hasPrefix(p.Name, name+"-") && p.DeletionTimestamp == nil {
			podsLeft++
			if len(p.OwnerReferences) > 0 {
				podsOwned++
			}
		}
	}
	_, getErr := w.f.Client.AppsV1().Deployments(w.f.Namespace).Get(ctx, name, metav1.GetOptions{})
	return map[string]any{"deploymentGone": getErr != nil, "replicaSetsRemain": remaining, "podsRemain": podsLeft,
		"podsStillOwnedByReplicaSet": podsOwned, "dependentsCleanedUp": remaining == 0 && podsLeft == 0}
}

// rolloutBounds computes, from the template change on, the extremes of what
// maxSurge and maxUnavailable bound: the Pods the ReplicaSets ask for, the
// Pods that exist (not terminating, from the Pod watch) and the Pods the
// ReplicaSets report available. Events before the change give the state the
// rollout began from.
func rolloutBounds(rsEvents []observe.Event, rsStart int, podEvents []observe.Event, podStart int, replicas int32) map[string]any {
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
	return map[string]any{
		"replicas": replicas, "maxDesired": maxDesired, "maxPods": maxPods, "minAvailable": minAvailable,
		"withinBounds": maxDesired <= replicas+1 && int32(maxPods) <= replicas+1 && minAvailable >= replicas,
	}
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

func create(ctx context.Context, f *framework.Framework, d *appsv1.Deployment) {
	ginkgo.GinkgoHelper()
	_, err := f.Client.AppsV1().Deployments(f.Namespace).Create(ctx, d, metav1.CreateOptions{})
	framework.ExpectNoError(err, "create Deployment %s", d.Name)
}

func kubectl(ctx context.Context, f *framework.Framework, args ...string) {
	ginkgo.GinkgoHelper()
	res, err := f.Kubectl.Run(ctx, nil, append(args, "--namespace", f.Namespace)...)
	framework.ExpectNoError(err, "run kubectl %v", args)
	gomega.Expect(res.ExitCode).To(gomega.Equal(0), res.String())
}

func markAudit(l *audit.Log) (audit.Offset, error) {
	if l == nil {
		return 0, nil
	}
	return l.Mark()
}

func merge(a, b map[string]any) map[string]any {
	for k, v := range b {
		a[k] = v
	}
	return a
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }
