package local

import "github.com/kubeproof/kubeproof/framework/cluster"

func init() {
	cluster.Register(cluster.Registration{
		Name:     ProviderName,
		Summary:  "processes on this machine",
		Makes:    true,
		Optional: Optional,
		Flags:    []string{"apiserver-port", "etcd-members", "admission-control-config-file"},
		New: func(o cluster.Options) (cluster.Provider, error) {
			return New(Config{Shape: o.Shape, APIServerPort: o.APIServerPort, EtcdMembers: o.EtcdMembers, AdmissionConfig: o.AdmissionConfig, Progress: o.Progress})
		},
		Open: func(info *cluster.Info) (cluster.Provider, error) { return Open(info.Name) },
	})
}
