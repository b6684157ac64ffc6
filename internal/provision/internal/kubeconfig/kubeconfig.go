// Package kubeconfig is the provider for a cluster kubeproof did not make: it
// only reaches it through a kubeconfig. It cannot read the audit log, reach
// etcd, set component flags or load images, so checks that need those skip.
package kubeconfig

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/provision/internal/config"
)

// ProviderName is the --provider value.
const ProviderName = "kubeconfig"

// Provider uses an existing cluster.
type Provider struct {
	Path    string
	Context string
	// Kubectl is the kubectl to run; empty means the one in PATH.
	Kubectl string
	// Disposable: the user said nobody else uses the cluster.
	Disposable bool
	// InCluster: kubeproof runs in a Pod of the cluster (run --in-cluster).
	InCluster *config.InCluster
}

// New returns the provider for the cluster at path (and context); an empty
// path follows kubectl's rules ($KUBECONFIG, ~/.kube/config).
func New(path, kubeContext string) *Provider {
	return &Provider{Path: path, Context: kubeContext}
}

// Name implements cluster.Provider.
func (p *Provider) Name() string { return ProviderName }

// Up checks that the cluster answers; it creates nothing.
func (p *Provider) Up(ctx context.Context) (*cluster.Info, error) { return p.Info(ctx) }

// Down does nothing: kubeproof did not make this cluster.
func (p *Provider) Down(context.Context) error { return nil }

// Info implements cluster.Provider.
func (p *Provider) Info(ctx context.Context) (*cluster.Info, error) {
	_, client, err := cluster.Connect(ctx, p.Path, p.Context, 15*time.Second)
	if err != nil {
		if errors.Is(err, cluster.ErrKubeconfig) {
			// The contract names no flags; the provider's user has one.
			err = fmt.Errorf("%w (--kubeconfig and --context name the one to use)", err)
		}
		return nil, err
	}
	info := &cluster.Info{
		Provider:   ProviderName,
		Name:       cluster.CurrentContext(p.Path, p.Context),
		Kubeconfig: p.Path,
		Context:    p.Context,
		Reasons: map[cluster.Capability]string{
			cluster.AuditLog:          "the API server's audit log is on a machine kubeproof does not control",
			cluster.EtcdAccess:        "etcd's address and client certificates are not part of a kubeconfig",
			cluster.ControlPlaneFlags: "the control plane was configured by whoever made the cluster",
			cluster.LoadImage:         "kubeproof cannot put images on nodes it did not make; push them to a registry the nodes can reach",
			cluster.NodeExec:          "kubeproof has no access to the nodes",
			cluster.ClusterCA:         "the cluster CA's key is not part of a kubeconfig",
			cluster.RegistryPull:      "kubeproof does not know a registry your nodes pull from",
		},
		CreatedAt: time.Now(),
	}
	p.inCluster(info)
	if p.Disposable {
		info.Capabilities = append(info.Capabilities, cluster.Disposable)
	} else {
		info.Reasons[cluster.Disposable] = "kubeproof did not make this cluster, and others may be using it (pass --disposable if nobody else does)"
	}
	if v, err := client.Discovery().ServerVersion(); err == nil {
		info.KubernetesVersion = v.GitVersion
	}
	// The node list is for the report only; a user who may not list Nodes
	// still gets every check that does not need them.
	if nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
		for _, n := range nodes.Items {
			info.Nodes = append(info.Nodes, n.Name)
		}
	}
	kubectl := p.Kubectl
	if kubectl == "" {
		if path, err := exec.LookPath("kubectl"); err == nil {
			kubectl = path
		}
	}
	info.Kubectl = kubectl
	return info, nil
}

// inPod are the reasons a run in a Pod of the cluster lacks what a run
// outside it may have had: they name the position, so that a verdict that
// differs between the two runs says why.
var inPod = map[cluster.Capability]string{
	cluster.AuditLog:          "the API server's audit log is a file on the control plane's machine, outside the Pod",
	cluster.EtcdAccess:        "etcd's client certificates stay with the run outside the cluster (kubeproof puts no credentials into it)",
	cluster.ControlPlaneFlags: "the control plane's components run outside kubeproof's Pod, which can neither restart nor reconfigure them",
	cluster.NodeExec:          "kubeproof's Pod runs in none of a node's namespaces",
	cluster.ClusterCA:         "the cluster CA's key stays with the run outside the cluster",
}

// inCluster fits info to a run in a Pod of the cluster: what the outer
// run knew of the nodes holds, what it could reach from outside does not.
func (p *Provider) inCluster(info *cluster.Info) {
	if p.InCluster == nil {
		return
	}
	for c, why := range inPod {
		info.Reasons[c] = "kubeproof runs in a Pod of the cluster (run --in-cluster): " + why
	}
	if p.InCluster.LoadedImages {
		info.Capabilities = append(info.Capabilities, cluster.LoadImage)
		delete(info.Reasons, cluster.LoadImage)
	}
}

// Status implements cluster.Provider.
func (p *Provider) Status(ctx context.Context) (cluster.Status, error) {
	info, err := p.Info(ctx)
	if err != nil {
		return cluster.Status{}, err
	}
	return cluster.Status{Up: true, Lines: []cluster.StatusLine{
		{Part: "api-server", State: "ready", Detail: info.KubernetesVersion},
	}}, nil
}
