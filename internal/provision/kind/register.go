package kind

import (
	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/internal/provision/create"
)

func init() {
	create.Register(create.Registration{
		Name:     ProviderName,
		Summary:  "Docker containers, made with kind",
		Makes:    true,
		Optional: Optional,
		Reads:    []create.Knob{create.KnobWorkers, create.KnobNodeImage, create.KnobDebianMirror},
		New: func(o create.Options) (cluster.Provider, error) {
			return New(Config{Shape: o.Shape, Workers: o.Kind.Workers, NodeImage: o.Kind.NodeImage, DebianMirror: o.Kind.DebianMirror, Progress: o.Progress})
		},
	})
	cluster.RegisterOpener(ProviderName, func(info *cluster.Info) (cluster.Provider, error) { return Open(info.Name) })
}
