package kind

import "github.com/kubeproof/kubeproof/framework/cluster"

func init() {
	cluster.Register(cluster.Registration{
		Name:     ProviderName,
		Summary:  "Docker containers, made with kind",
		Makes:    true,
		Optional: Optional,
		Flags:    []string{"workers", "node-image", "debian-mirror"},
		New: func(o cluster.Options) (cluster.Provider, error) {
			return New(Config{Shape: o.Shape, Workers: o.Workers, NodeImage: o.NodeImage, DebianMirror: o.DebianMirror, Progress: o.Progress})
		},
		Open: func(info *cluster.Info) (cluster.Provider, error) { return Open(info.Name) },
	})
}
