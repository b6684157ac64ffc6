package kubeconfig

import (
	"github.com/kubeproof/kubeproof/framework/cluster"
)

func init() {
	cluster.Register(cluster.Registration{
		Name:    ProviderName,
		Summary: "an existing cluster",
		Flags:   []string{"kubeconfig", "context", "disposable"},
		// Without --kubeconfig, kubectl's rules find it ($KUBECONFIG,
		// ~/.kube/config); the spec processes inherit the same environment.
		New: func(o cluster.Options) (cluster.Provider, error) {
			p := New(o.Kubeconfig, o.Context)
			p.Disposable = o.Disposable
			return p, nil
		},
	})
}
