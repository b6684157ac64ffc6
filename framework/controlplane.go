package framework

import (
	"context"
	"errors"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	"k8s.io/client-go/rest"

	"github.com/kubeproof/kubeproof/framework/cluster"
)

// StartAPIServer starts an extra API server of the cluster under test with
// extra flags (which win over the cluster's), stopped when the spec ends,
// and returns it with a copy of the spec's client configuration pointed at
// it. The spec skips, saying why, when the provider cannot do this.
func (f *Framework) StartAPIServer(ctx context.Context, args ...string) (*cluster.APIServer, *rest.Config) {
	ginkgo.GinkgoHelper()
	f.Require(cluster.ControlPlaneFlags)
	starter, err := apiServerStarter(f.Cluster)
	if errors.Is(err, errNoStarter) {
		ginkgo.Skip(err.Error())
	}
	// A provider that can start one but whose cluster cannot be opened is
	// broken, not lacking a capability: that fails.
	ExpectNoError(err, "open the %s cluster %q", f.Cluster.Provider, f.Cluster.Name)
	ginkgo.By(fmt.Sprintf("starting an extra API server with %v", args))
	srv, err := starter.StartAPIServer(ctx, args)
	ExpectNoError(err, "start an extra API server")
	ginkgo.DeferCleanup(srv.Stop)
	cfg := rest.CopyConfig(f.RESTConfig)
	cfg.Host = srv.URL
	return srv, cfg
}

// apiServerStarter is the cluster's provider, if it can start an extra API
// server (an ability found by interface, through the provider registry).
func apiServerStarter(info *cluster.Info) (cluster.APIServerStarter, error) {
	p, err := cluster.Open(info)
	if err != nil {
		if errors.Is(err, cluster.ErrNoAbility) {
			return nil, fmt.Errorf("provider %s: %w", info.Provider, errNoStarter)
		}
		return nil, err
	}
	s, ok := p.(cluster.APIServerStarter)
	if !ok {
		return nil, fmt.Errorf("provider %s: %w", info.Provider, errNoStarter)
	}
	return s, nil
}

// errNoStarter: the provider has no way to start an extra API server.
var errNoStarter = errors.New("cannot start an extra API server")
