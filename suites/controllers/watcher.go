package controllers

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/observe"
	"github.com/kubeproof/kubeproof/kube/podstate"
)

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

// podState is the namespace's Pods as the watch last saw them (those
// being deleted left out).
type podState struct {
	existing, bound, running, ready int
	names                           []string
	pods                            []*corev1.Pod
}

// readyWithPrefix counts the Ready Pods whose name starts with prefix.
func (s podState) readyWithPrefix(prefix string) int {
	n := 0
	for _, p := range s.pods {
		if strings.HasPrefix(p.Name, prefix) && framework.PodReady(p) {
			n++
		}
	}
	return n
}

func podsNow(events []observe.Event) podState {
	latest := observe.Latest[*corev1.Pod](events)
	var s podState
	for _, name := range slices.Sorted(maps.Keys(latest)) {
		p := latest[name]
		if p.DeletionTimestamp != nil {
			continue
		}
		s.existing++
		s.names = append(s.names, name)
		s.pods = append(s.pods, p)
		if p.Spec.NodeName != "" {
			s.bound++
		}
		if podstate.AllRunning(p.Status.ContainerStatuses, len(p.Spec.Containers)) {
			s.running++
		}
		if framework.PodReady(p) {
			s.ready++
		}
	}
	return s
}

func (s podState) String() string {
	return fmt.Sprintf("%d Pods (%d bound, %d running, %d Ready): %v", s.existing, s.bound, s.running, s.ready, s.names)
}

// podsWithin waits, for at most window, until ok holds for the namespace's
// Pods, and returns them as last seen.
func (w *watcher) podsWithin(ctx context.Context, what string, window time.Duration, ok func(podState) bool) (podState, bool) {
	ginkgo.GinkgoHelper()
	events, held := framework.Await(ctx, w.pod, what, window, func(es []observe.Event) bool { return ok(podsNow(es)) })
	return podsNow(events), held
}

// podsOrStop is podsWithin for a state the spec needs to go on: one not
// reached stops it.
func (w *watcher) podsOrStop(ctx context.Context, what string, ok func(podState) bool) podState {
	ginkgo.GinkgoHelper()
	s, held := w.podsWithin(ctx, what, framework.Timeout.PodStart, ok)
	w.stopUnless(held, what, s)
	return s
}

// stopUnless stops the spec when the controllers did not bring the Pods to
// what they should be.
func (w *watcher) stopUnless(held bool, what string, s podState) {
	ginkgo.GinkgoHelper()
	if !held {
		framework.Unmet("kube-controller-manager", what, "last seen: "+s.String())
	}
}

// latestReplicaSets is the namespace's ReplicaSets as last seen.
func latestReplicaSets(events []observe.Event) map[string]*appsv1.ReplicaSet {
	return observe.Latest[*appsv1.ReplicaSet](events)
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

// complete waits, for at most Timeout.Rollout, until a Deployment's rollout
// is complete: every replica updated and available, nothing older left.
func (w *watcher) complete(ctx context.Context, name string) bool {
	ginkgo.GinkgoHelper()
	lw := cache.NewFilteredListWatchFromClient(w.f.Client.AppsV1().RESTClient(), "deployments", w.f.Namespace, func(o *metav1.ListOptions) {
		o.FieldSelector = observe.NameSelector(name)
	})
	_, err := observe.Until(ctx, framework.Timeout.Rollout, "Deployment "+name+" to finish its rollout", lw, func(d *appsv1.Deployment) (bool, error) {
		want := *d.Spec.Replicas
		s := d.Status
		return s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want && s.Replicas == want && s.AvailableReplicas == want, nil
	}, nil)
	if err != nil && ctx.Err() != nil {
		ginkgo.Fail("interrupted while waiting for the rollout of " + name)
	}
	return err == nil
}

// completeOrStop is complete for a rollout the spec needs to go on.
func (w *watcher) completeOrStop(ctx context.Context, name string) {
	ginkgo.GinkgoHelper()
	if !w.complete(ctx, name) {
		d, err := w.f.Client.AppsV1().Deployments(w.f.Namespace).Get(ctx, name, metav1.GetOptions{})
		framework.ExpectNoError(err, "read Deployment %s", name)
		framework.Unmet("kube-controller-manager", "Deployment "+name+" rolled out", fmt.Sprintf("not complete within %s; generation %d observed %d, status %+v",
			framework.Timeout.Rollout, d.Generation, d.Status.ObservedGeneration, d.Status))
	}
}

// currentReplicaSet is the ReplicaSet of a Deployment's current template.
func (w *watcher) currentReplicaSet(ctx context.Context, name string) appsv1.ReplicaSet {
	ginkgo.GinkgoHelper()
	d, err := w.f.Client.AppsV1().Deployments(w.f.Namespace).Get(ctx, name, metav1.GetOptions{})
	framework.ExpectNoError(err, "read Deployment %s", name)
	list, err := w.f.Client.AppsV1().ReplicaSets(w.f.Namespace).List(ctx, metav1.ListOptions{})
	framework.ExpectNoError(err, "list ReplicaSets")
	for _, rs := range list.Items {
		if controllerRef(rs.OwnerReferences).uid == string(d.UID) &&
			rs.Annotations["deployment.kubernetes.io/revision"] == d.Annotations["deployment.kubernetes.io/revision"] {
			return rs
		}
	}
	ginkgo.Fail(fmt.Sprintf("no ReplicaSet of %s has its revision %s", name, d.Annotations["deployment.kubernetes.io/revision"]))
	return appsv1.ReplicaSet{}
}

// remaining counts a Deployment's ReplicaSets and Pods (by name prefix) in
// the watches' latest state.
func (w *watcher) remaining(name string) (replicaSets, pods int) {
	prefix := name + "-"
	for _, p := range podsNow(w.pod.Events()).names {
		if strings.HasPrefix(p, prefix) {
			pods++
		}
	}
	for rsName := range latestReplicaSets(w.rs.Events()) {
		if strings.HasPrefix(rsName, prefix) {
			replicaSets++
		}
	}
	return replicaSets, pods
}

// dependentsGone watches, for at most Timeout.Controller, for a deleted
// Deployment's ReplicaSets and Pods to go, and says what was left.
func (w *watcher) dependentsGone(ctx context.Context, name string) backgroundEvidence {
	ginkgo.GinkgoHelper()
	gone := func() bool { rs, pods := w.remaining(name); return rs == 0 && pods == 0 }
	// One window for both: the ReplicaSets go first, then their Pods.
	deadline := time.Now().Add(framework.Timeout.Controller)
	framework.Await(ctx, w.rs, "the ReplicaSets of "+name+" to go", time.Until(deadline), func([]observe.Event) bool { return gone() })
	framework.Await(ctx, w.pod, "the Pods of "+name+" to go", max(time.Until(deadline), 0), func([]observe.Event) bool { return gone() })
	rs, pods := w.remaining(name)
	return backgroundEvidence{RSGone: rs == 0, PodsGone: pods == 0, ReplicaSetsRemaining: rs, PodsRemaining: pods}
}

// foregroundDeletion watches a Deployment deleted with foreground
// propagation: was it marked (finalizer, deletionTimestamp) while its
// ReplicaSet lived, did it go within Timeout.Controller, and only after the
// ReplicaSet?
func (w *watcher) foregroundDeletion(ctx context.Context, name string) foregroundEvidence {
	ginkgo.GinkgoHelper()
	deletedAt := func(es []observe.Event) time.Time {
		for _, e := range es {
			if d, ok := e.Object.(*appsv1.Deployment); ok && d.Name == name && e.Type == watch.Deleted {
				return e.Received
			}
		}
		return time.Time{}
	}
	events, _ := framework.Await(ctx, w.dp, "Deployment "+name+" to be deleted", framework.Timeout.Controller, func(es []observe.Event) bool {
		return !deletedAt(es).IsZero()
	})
	ev := foregroundEvidence{}
	for _, e := range events {
		if d, ok := e.Object.(*appsv1.Deployment); ok && d.Name == name &&
			d.DeletionTimestamp != nil && slices.Contains(d.Finalizers, metav1.FinalizerDeleteDependents) {
			ev.MarkedWithFinalizer = true
		}
	}
	gone := deletedAt(events)
	ev.DeploymentGone = !gone.IsZero()
	rsGone := time.Time{}
	for _, e := range w.rs.Events() {
		if rs, ok := e.Object.(*appsv1.ReplicaSet); ok && strings.HasPrefix(rs.Name, name+"-") && e.Type == watch.Deleted {
			rsGone = e.Received
		}
	}
	ev.OwnerGoneAfterDependents = ev.DeploymentGone && !rsGone.IsZero() && rsGone.Before(gone)
	return ev
}

// orphaned watches, for at most Timeout.Controller, for the orphaned
// ReplicaSet to lose its owner, then reports what remains.
func (w *watcher) orphaned(ctx context.Context, name string) orphanEvidence {
	ginkgo.GinkgoHelper()
	ownerless := func(es []observe.Event) bool {
		for n, rs := range latestReplicaSets(es) {
			if strings.HasPrefix(n, name+"-") && len(rs.OwnerReferences) == 0 {
				return true
			}
		}
		return false
	}
	events, removed := framework.Await(ctx, w.rs, "the orphaned ReplicaSet to lose its owner", framework.Timeout.Controller, ownerless)
	ev := orphanEvidence{OwnerRefRemoved: removed}
	for n := range latestReplicaSets(events) {
		if strings.HasPrefix(n, name+"-") {
			ev.ReplicaSetsRemain++
		}
	}
	list, err := w.f.Client.CoreV1().Pods(w.f.Namespace).List(ctx, metav1.ListOptions{})
	framework.ExpectNoError(err, "list Pods")
	for _, p := range list.Items {
		if strings.HasPrefix(p.Name, name+"-") && p.DeletionTimestamp == nil {
			ev.PodsRemain++
			if len(p.OwnerReferences) > 0 {
				ev.PodsStillOwnedByReplicaSet++
			}
		}
	}
	_, getErr := w.f.Client.AppsV1().Deployments(w.f.Namespace).Get(ctx, name, metav1.GetOptions{})
	ev.DeploymentGone = apierrors.IsNotFound(getErr)
	ev.DependentsCleanedUp = ev.ReplicaSetsRemain == 0 && ev.PodsRemain == 0
	return ev
}
