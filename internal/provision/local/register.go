package local

import (
	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/internal/provision/create"
)

func init() {
	create.Register(create.Registration{
		Name:     ProviderName,
		Summary:  "processes on this machine",
		Makes:    true,
		Optional: Optional,
		Reads:    []create.Knob{create.KnobAPIServerPort, create.KnobEtcdMembers, create.KnobAdmissionConfig},
		New: func(o create.Options) (cluster.Provider, error) {
			return New(Config{Shape: o.Shape, APIServerPort: o.Local.APIServerPort, EtcdMembers: o.Local.EtcdMembers, AdmissionConfig: o.Local.AdmissionConfig, Progress: o.Progress})
		},
	})
	cluster.RegisterOpener(ProviderName, func(info *cluster.Info) (cluster.Provider, error) { return Open(info.Name) })
}
