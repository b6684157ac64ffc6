package framework

import (
	"context"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeproof/kubeproof/claims/speclink"
	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/kube/noderuntime"
)

// RuntimeContainer is a container as the node's runtime holds it.
type RuntimeContainer = noderuntime.Container

// RuntimeContainers asks the containerd of a Pod's node (NodeExec, which
// the spec declares it uses or requires) for the Pod's containers, oldest
// first.
func (f *Framework) RuntimeContainers(ctx context.Context, pod string) ([]RuntimeContainer, error) {
	ginkgo.GinkgoHelper()
	mustHaveDeclared(cluster.NodeExec, speclink.UsesLabelPrefix, speclink.RequiresLabelPrefix)
	p, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read Pod %s: %w", pod, err)
	}
	return noderuntime.Containers(ctx, f.Cluster, p.Spec.NodeName, f.Namespace, pod)
}
