package kubeconfig

import (
	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/internal/provision/create"
)

func init() {
	create.Register(create.Registration{
		Name:    ProviderName,
		Summary: "an existing cluster",
		Reads:   []create.Knob{create.KnobKubeconfig, create.KnobContext, create.KnobDisposable},
		// Without a kubeconfig named, kubectl's rules find it
		// ($KUBECONFIG, ~/.kube/config); the spec processes inherit the
		// same environment.
		New: func(o create.Options) (cluster.Provider, error) {
			p := New(o.Existing.Kubeconfig, o.Existing.Context)
			p.Disposable = o.Existing.Disposable
			return p, nil
		},
	})
	// A spec process given only a kubeconfig opens it to learn what the
	// cluster can do (the provider has no abilities beyond that).
	cluster.RegisterOpener(ProviderName, func(info *cluster.Info) (cluster.Provider, error) {
		return New(info.Kubeconfig, info.Context), nil
	})
}
