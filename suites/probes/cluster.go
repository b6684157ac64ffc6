package probes

import (
	"context"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kubeproof/kubeproof/claims/probe"
	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/noderuntime"
	"github.com/kubeproof/kubeproof/kube/observe"
)

// refusedScope is why a probe that changes the whole cluster does not run
// on this one ("" when it may).
func refusedScope(f *framework.Framework, p probe.LoadedProbe) string {
	if p.Scope != probe.ScopeCluster || f.Cluster.Has(cluster.Disposable) {
		return ""
	}
	return fmt.Sprintf("probe %s changes the whole cluster (scope: cluster), which would disturb its other users: %s", p.ID, f.Cluster.Missing(cluster.Disposable))
}

// clusterScoped checks an object the probe is about to create: a
// cluster-scoped one (by what the API server says of its kind) is made only
// by a probe of scope cluster, and is deleted when the probe ends. It
// returns what to do once the object is created.
func (r *run) clusterScoped(obj *unstructured.Unstructured, ri dynamic.ResourceInterface) (func(), error) {
	m, err := r.env.Mapping(obj.GetAPIVersion(), obj.GetKind())
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return func() {}, nil
	}
	if r.p.Scope != probe.ScopeCluster {
		return nil, fmt.Errorf("probe %s makes %s %s, which is cluster-scoped: declare scope: cluster", r.p.ID, obj.GetKind(), obj.GetName())
	}
	what := fmt.Sprintf("%s %s", obj.GetKind(), obj.GetName())
	return func() {
		// Deleted when the spec ends, also after a failure: the
		// namespace's deletion does not take it along.
		ginkgo.DeferCleanup(func(ctx context.Context) {
			ginkgo.By("deleting " + what + ", which the probe made")
			err := ri.Delete(ctx, obj.GetName(), metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				return
			}
			framework.ExpectNoError(err, "delete %s", what)
			lw := observe.Named(ri.List, ri.Watch, obj.GetName())
			_, err = observe.Gone[*unstructured.Unstructured](ctx, framework.Timeout.NamespaceDelete, what+" gone", lw, nil)
			framework.ExpectNoError(err, "delete %s", what)
		})
	}, nil
}

// restartComponent restarts a component with the step's change; the
// framework restarts it as it was when the spec ends, if no step did.
func (r *run) restartComponent(ctx context.Context, s *probe.ComponentRestart) error {
	change := cluster.ComponentChange{Args: s.Args, FeatureGates: s.FeatureGates, Config: s.Config, Node: s.Node}
	if s.Pod != "" {
		pod, err := r.f.Client.CoreV1().Pods(r.f.Namespace).Get(ctx, s.Pod, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("the node of Pod %s: %w", s.Pod, err)
		}
		if pod.Spec.NodeName == "" {
			return fmt.Errorf("the Pod %s is on no node yet", s.Pod)
		}
		change.Node = pod.Spec.NodeName
	}
	restore, err := r.f.RestartComponent(ctx, s.Component, change)
	if err != nil {
		return err
	}
	r.restored[s.Component] = restore
	return nil
}

// signal sends a signal to a container of a Pod, or its sandbox, through
// its node's runtime.
func (r *run) signal(ctx context.Context, s *probe.Signal) error {
	if !r.f.Cluster.Has(cluster.NodeExec) {
		return fmt.Errorf("%s", r.f.Cluster.Missing(cluster.NodeExec))
	}
	pod, err := r.f.Client.CoreV1().Pods(r.f.Namespace).Get(ctx, s.Pod, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read Pod %s: %w", s.Pod, err)
	}
	if pod.Spec.NodeName == "" {
		return fmt.Errorf("the Pod %s is on no node yet", s.Pod)
	}
	cs, err := noderuntime.Containers(ctx, r.f.Cluster, pod.Spec.NodeName, r.f.Namespace, s.Pod)
	if err != nil {
		return err
	}
	want := s.Container
	if want == "" && !s.Sandbox && len(pod.Spec.Containers) > 0 {
		want = pod.Spec.Containers[0].Name
	}
	id := ""
	for _, c := range cs { // oldest first: the newest of the name wins
		if (s.Sandbox && c.Kind == "sandbox") || (!s.Sandbox && c.Kind != "sandbox" && c.Name == want) {
			id = c.ID
		}
	}
	what := "container " + want
	if s.Sandbox {
		what = "the sandbox"
	}
	if id == "" {
		return fmt.Errorf("the runtime of node %s holds no %s of Pod %s", pod.Spec.NodeName, what, s.Pod)
	}
	sig := s.Signal
	if sig == "" {
		sig = "KILL"
	}
	ginkgo.By(fmt.Sprintf("sending SIG%s to %s of Pod %s through the runtime", sig, what, s.Pod))
	if err := noderuntime.Signal(ctx, r.f.Cluster, pod.Spec.NodeName, id, sig); err != nil {
		return fmt.Errorf("signal %s of Pod %s: %w", what, s.Pod, err)
	}
	return nil
}
