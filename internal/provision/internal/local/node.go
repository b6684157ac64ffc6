package local

import (
	"context"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeproof/kubeproof/internal/provision/internal/process"
	"github.com/kubeproof/kubeproof/kube/observe"
)

// startNode starts the kubelet, closes registered once the node object
// exists, gives the node its pod network, and waits for the node to be Ready.
func (u *bringUp) startNode(ctx context.Context, registered chan<- struct{}) error {
	c, l, s := u.p.cfg, u.p.l, u.s
	started := time.Now()
	if _, err := s.start(u.byName[Kubelet]); err != nil {
		return err
	}
	s.mu.Lock()
	proc := s.procs[Kubelet]
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-proc.Exited():
			cancel()
		case <-ctx.Done():
		}
	}()
	exitErr := func(err error) error {
		select {
		case <-proc.Exited():
			return fmt.Errorf("kubelet exited during startup (%v); last log lines:\n%s", proc.Err(), process.Tail(proc.Log, 5))
		default:
			return err
		}
	}
	lw := cache.NewFilteredListWatchFromClient(u.admin.CoreV1().RESTClient(), "nodes", "", func(o *metav1.ListOptions) {
		o.FieldSelector = observe.NameSelector(l.nodeName())
	})
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		_, err := observe.Until(gctx, nodeTimeout, "node "+l.nodeName()+" to be Ready", lw, func(n *corev1.Node) (bool, error) {
			return nodeReady(n), nil
		}, describeNode)
		if err != nil {
			return exitErr(err)
		}
		s.readyAs("node "+l.nodeName()+" Ready", Kubelet, started)
		return nil
	})
	// The node gets its pod CIDR from us as soon as it registers: the
	// controller manager's node-ipam controller would give it the same
	// first /24 only once all its controllers are built, about 5 s after
	// the node is Ready, and takes a range a node already has as used.
	// Without a controller manager the node keeps none, as before.
	g.Go(func() error {
		node, err := observe.Until(gctx, nodeTimeout, "node "+l.nodeName()+" to register", lw, func(n *corev1.Node) (bool, error) {
			return true, nil
		}, describeNode)
		if err != nil {
			return exitErr(err)
		}
		close(registered)
		if !c.Runs(ControllerManager) {
			return nil
		}
		want := c.network().nodePodCIDR.String()
		if node.Spec.PodCIDR == "" {
			node, err = assignPodCIDR(gctx, u.admin, l.nodeName(), want)
			if err != nil {
				return err
			}
		}
		// Had the controller manager been first with another range,
		// the pod network follows it.
		if node.Spec.PodCIDR != want {
			if err := writeCNIConfig(c, l, node.Spec.PodCIDR); err != nil {
				return err
			}
		}
		s.ready("node pod CIDR "+node.Spec.PodCIDR, started)
		return nil
	})
	return g.Wait()
}

// assignPodCIDR sets the node's pod CIDR. The API server takes it only while
// the node has none; if the controller manager set one first, the node as it
// is now is returned.
func assignPodCIDR(ctx context.Context, admin kubernetes.Interface, node, cidr string) (*corev1.Node, error) {
	patch := fmt.Sprintf(`{"spec":{"podCIDR":%q,"podCIDRs":[%q]}}`, cidr, cidr)
	n, err := admin.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err == nil {
		return n, nil
	}
	n, getErr := admin.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if getErr != nil || n.Spec.PodCIDR == "" {
		return nil, fmt.Errorf("assign pod CIDR %s to node %s: %w", cidr, node, err)
	}
	return n, nil
}

func nodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

func describeNode(n *corev1.Node) string {
	var parts []string
	parts = append(parts, "podCIDR="+n.Spec.PodCIDR)
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			parts = append(parts, fmt.Sprintf("Ready=%s (%s: %s)", cond.Status, cond.Reason, cond.Message))
		}
	}
	return fmt.Sprintf("node %s %s", n.Name, strings.Join(parts, " "))
}
