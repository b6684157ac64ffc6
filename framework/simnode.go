package framework

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/kube/access"
	"github.com/onsi/ginkgo/v2"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// Labels and taint of simulated nodes.
const (
	// SimulatedLabel marks every simulated node (and any other Node object
	// a spec makes that no kubelet runs), so that reports can say which
	// results came from nodes without a kubelet, and specs that judge the
	// real nodes leave them out.
	SimulatedLabel = "kubeproof.io/simulated"
	// SimulatedForLabel names the namespace a simulated node belongs to;
	// specs select their own nodes with it.
	SimulatedForLabel = "kubeproof.io/simulated-for"
	// SimulatedTaint keeps every other Pod off a simulated node: only the
	// spec's Pods, which tolerate it, can land there.
	SimulatedTaint = "kubeproof.io/simulated"
)

// SimNode describes a simulated node: a Node object whose status and Lease
// the harness keeps fresh, as a kubelet would, but which runs nothing. The
// scheduler treats it like any node, so scheduling can be observed with
// more nodes than the machine has. Pods bound to it stay Pending.
type SimNode struct {
	CPU, Memory string
	// Extended resources it advertises (name -> quantity).
	Extended map[string]string
	Labels   map[string]string
	Taints   []corev1.Taint
	// Images it reports holding (what ImageLocality scores).
	Images []corev1.ContainerImage
}

// SimulatedNode creates a simulated node named name (prefixed with the
// namespace), keeps it alive until the spec ends, then removes it and the
// Pods bound to it. The spec declares framework.Disturbs("adds simulated
// Nodes") beside its ID.
func (f *Framework) SimulatedNode(ctx context.Context, name string, s SimNode) *corev1.Node {
	ginkgo.GinkgoHelper()
	f.Require(cluster.Disposable)
	f.NeedsAccess(access.Nodes)
	full := f.Namespace + "-" + name
	labels := map[string]string{SimulatedLabel: "true", SimulatedForLabel: f.Namespace, corev1.LabelHostname: full}
	for k, v := range s.Labels {
		labels[k] = v
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(s.CPU), corev1.ResourceMemory: resource.MustParse(s.Memory),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	for k, v := range s.Extended {
		capacity[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	taints := append([]corev1.Taint{{Key: SimulatedTaint, Value: f.Namespace, Effect: corev1.TaintEffectNoSchedule}}, s.Taints...)
	status := func(now metav1.Time) corev1.NodeStatus {
		return corev1.NodeStatus{
			Capacity: capacity, Allocatable: capacity,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeproofSimulated",
				Message: "simulated by kubeproof: no kubelet runs here", LastHeartbeatTime: now, LastTransitionTime: now}},
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "simulated", OperatingSystem: "linux", Architecture: "amd64"},
			Images:   s.Images,
		}
	}
	// The status goes with the Node's creation, as a kubelet registers its
	// node: a scheduler that saw the Node without it (no allocatable, no
	// images) could place a spec's first Pod by a state the spec never meant.
	node, err := f.Client.CoreV1().Nodes().Create(ctx, Own(&corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: full, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: taints},
		Status:     status(metav1.Now()),
	}), metav1.CreateOptions{})
	ExpectNoError(err, "create simulated node %s", full)
	ginkgo.DeferCleanup(f.removeSimulatedNode, full)

	// A server that drops a Node's status on create gets it set on a fresh
	// read, again on conflict (controllers update a new Node at once).
	if len(node.Status.Allocatable) == 0 {
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			current, err := f.Client.CoreV1().Nodes().Get(ctx, full, metav1.GetOptions{})
			if err != nil {
				return err
			}
			current.Status = status(metav1.Now())
			node, err = f.Client.CoreV1().Nodes().UpdateStatus(ctx, current, metav1.UpdateOptions{})
			return err
		})
		ExpectNoError(err, "set the status of simulated node %s", full)
	}

	// The node lifecycle controller marks a node unreachable when its Lease
	// is not renewed; renew it as a kubelet does, until the spec ends.
	leaseCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	ginkgo.DeferCleanup(stop)
	ExpectNoError(f.renewLease(leaseCtx, full), "create the Lease of simulated node %s", full)
	go func() {
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-leaseCtx.Done():
				return
			case <-t.C:
				_ = f.renewLease(leaseCtx, full)
			}
		}
	}()
	return node
}

func (f *Framework) renewLease(ctx context.Context, node string) error {
	leases := f.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(time.Now())
	duration := int32(40)
	lease, err := leases.Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		_, err = leases.Create(ctx, Own(&coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: node},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &node, LeaseDurationSeconds: &duration, RenewTime: &now},
		}), metav1.CreateOptions{})
		return err
	}
	lease.Spec.RenewTime = &now
	_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	return err
}

// removeSimulatedNode force-deletes the Pods bound to the node (no kubelet
// will ever confirm their termination), then the node and its Lease.
func (f *Framework) removeSimulatedNode(ctx context.Context, node string) {
	pods, err := f.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err == nil {
		zero := int64(0)
		for _, p := range pods.Items {
			_ = f.Client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		}
	}
	if err := f.Client.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{}); err != nil {
		ginkgo.GinkgoWriter.Println(fmt.Sprintf("remove simulated node %s: %v", node, err))
	}
	_ = f.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, node, metav1.DeleteOptions{})
}

// TolerateSimulated lets a Pod onto the spec's simulated nodes, and only
// onto them (node selector).
func (f *Framework) TolerateSimulated(p *corev1.PodSpec) {
	p.Tolerations = append(p.Tolerations, corev1.Toleration{Key: SimulatedTaint, Operator: corev1.TolerationOpEqual, Value: f.Namespace, Effect: corev1.TaintEffectNoSchedule})
	if p.NodeSelector == nil {
		p.NodeSelector = map[string]string{}
	}
	p.NodeSelector[SimulatedForLabel] = f.Namespace
}

// WorkerNodes returns the cluster's real nodes (no simulated ones) that
// take ordinary Pods: schedulable and without NoSchedule or NoExecute
// taints (a kind control plane has one), sorted by name. The spec fails if
// there is none.
func (f *Framework) WorkerNodes(ctx context.Context) []corev1.Node {
	ginkgo.GinkgoHelper()
	list, err := f.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "!" + SimulatedLabel})
	ExpectNoError(err, "list the real nodes")
	out := workers(list.Items)
	if len(out) == 0 {
		// A cluster fact, not a harness bug: a node under disk pressure
		// (the kubelet's condition, tainted NoSchedule) takes no Pod.
		Unmet("kubelet", "a real node takes ordinary Pods", fmt.Sprintf("none of %d: %s", len(list.Items), whyNotWorkers(list.Items)))
	}
	return out
}

// whyNotWorkers says, node by node, what keeps ordinary Pods off it.
func whyNotWorkers(nodes []corev1.Node) string {
	var why []string
	for _, n := range nodes {
		var keeps []string
		if n.Spec.Unschedulable {
			keeps = append(keeps, "unschedulable (cordoned)")
		}
		for _, t := range n.Spec.Taints {
			if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
				keeps = append(keeps, "taint "+t.Key+":"+string(t.Effect))
			}
		}
		why = append(why, n.Name+": "+strings.Join(keeps, ", "))
	}
	if len(why) == 0 {
		return "the cluster has no node"
	}
	return strings.Join(why, "; ")
}

// workers are the nodes that take ordinary Pods: schedulable, without
// NoSchedule or NoExecute taints, sorted by name.
func workers(nodes []corev1.Node) []corev1.Node {
	var out []corev1.Node
	for _, n := range nodes {
		if n.Spec.Unschedulable {
			continue
		}
		tainted := false
		for _, t := range n.Spec.Taints {
			if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
				tainted = true
			}
		}
		if !tainted {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
