package kubeconfig

import (
	"os"

	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/internal/exitcode"
)

func init() {
	cluster.Register(cluster.Registration{
		Name:    ProviderName,
		Summary: "an existing cluster",
		Flags:   []string{"kubeconfig", "context"},
		New: func(o cluster.Options) (cluster.Provider, error) {
			path := o.Kubeconfig
			if path == "" {
				path = os.Getenv("KUBECONFIG")
			}
			if path == "" {
				return nil, exitcode.Errorf(exitcode.Usage, "--provider kubeconfig needs --kubeconfig or $KUBECONFIG")
			}
			return New(path, o.Context), nil
		},
	})
}
