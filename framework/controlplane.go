package framework

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/onsi/ginkgo/v2"
	"k8s.io/client-go/rest"

	"github.com/kubeproof/kubeproof/contract/cluster"
)

// StartAPIServer starts an extra API server of the cluster under test with
// extra flags (which win over the cluster's), stopped when the spec ends,
// and returns it with a copy of the spec's client configuration pointed at
// it. The spec skips, saying why, when the provider cannot do this.
func (f *Framework) StartAPIServer(ctx context.Context, args ...string) (*cluster.APIServer, *rest.Config) {
	ginkgo.GinkgoHelper()
	f.Require(cluster.ControlPlaneFlags)
	starter := providerAbility[cluster.APIServerStarter](f, "start an extra API server")
	ginkgo.By(fmt.Sprintf("starting an extra API server with %v", args))
	srv, err := starter.StartAPIServer(ctx, args)
	ExpectNoError(err, "start an extra API server")
	ginkgo.DeferCleanup(srv.Stop)
	cfg := rest.CopyConfig(f.RESTConfig)
	cfg.Host = srv.URL
	return srv, cfg
}

// StopComponent stops a component of the cluster under test (etcd,
// kube-controller-manager, kube-scheduler) and returns what starts it
// again (its error is the component's failure to come back, for the spec
// to report), which also runs when the spec ends if the spec did not.
// The spec skips, saying why, when the provider cannot stop components.
// Specs that call it disturb every other spec: they carry the Serial label.
func (f *Framework) StopComponent(ctx context.Context, name string) (start func(context.Context) error) {
	ginkgo.GinkgoHelper()
	stopper := providerAbility[cluster.ComponentStopper](f, "stop and start its components")
	ginkgo.By("stopping " + name)
	restart, err := stopper.StopComponent(ctx, name)
	ExpectNoError(err, "stop %s", name)
	var once sync.Once
	var startErr error
	startOnce := func(ctx context.Context) error {
		once.Do(func() {
			ginkgo.By("starting " + name + " again")
			startErr = restart(ctx)
		})
		return startErr
	}
	ginkgo.DeferCleanup(startOnce)
	return startOnce
}

// providerAbility is the cluster's provider as a T, if the provider has
// that ability (found by interface, through the provider registry); the
// spec skips, naming what the provider cannot do, when it has not.
func providerAbility[T any](f *Framework, what string) T {
	ginkgo.GinkgoHelper()
	p, err := cluster.Open(f.Cluster)
	if errors.Is(err, cluster.ErrNoAbility) {
		ginkgo.Skip(fmt.Sprintf("provider %s cannot %s", f.Cluster.Provider, what))
	}
	// A provider that has abilities but whose cluster cannot be opened is
	// broken, not lacking one: that fails.
	ExpectNoError(err, "open the %s cluster %q", f.Cluster.Provider, f.Cluster.Name)
	a, ok := p.(T)
	if !ok {
		ginkgo.Skip(fmt.Sprintf("provider %s cannot %s", f.Cluster.Provider, what))
	}
	return a
}

// RestartComponent restarts a component of the cluster under test with
// change (other flags, feature gates, a configuration patch) and returns
// what restarts it as it was, which also runs when the spec ends if the
// spec did not (also when it failed). The spec skips, saying why, when the
// provider cannot restart components. Specs that call it disturb every
// other spec: they run alone (Serial).
func (f *Framework) RestartComponent(ctx context.Context, name string, change cluster.ComponentChange) (restore func(context.Context) error, err error) {
	ginkgo.GinkgoHelper()
	restarter := providerAbility[cluster.ComponentRestarter](f, "restart its components")
	ginkgo.By("restarting " + name)
	back, err := restarter.RestartComponent(ctx, name, change)
	if err != nil {
		return nil, err
	}
	var once sync.Once
	var backErr error
	restoreOnce := func(ctx context.Context) error {
		once.Do(func() {
			ginkgo.By("restarting " + name + " as it was")
			backErr = back(ctx)
		})
		return backErr
	}
	ginkgo.DeferCleanup(func(ctx context.Context) {
		ExpectNoError(restoreOnce(ctx), "restart %s as it was", name)
	})
	return restoreOnce, nil
}

// StartExtraComponent runs another instance of a component (a second
// kube-scheduler named name) beside the cluster's own until the spec ends.
// The spec skips, saying why, when the provider cannot.
func (f *Framework) StartExtraComponent(ctx context.Context, component, name string, args []string) error {
	ginkgo.GinkgoHelper()
	starter := providerAbility[cluster.ExtraComponentStarter](f, "run a second "+component)
	ginkgo.By(fmt.Sprintf("starting a second %s, %s", component, name))
	stop, err := starter.StartExtraComponent(ctx, component, name, args)
	if err != nil {
		return err
	}
	ginkgo.DeferCleanup(func() { ExpectNoError(stop(), "stop the second %s %s", component, name) })
	return nil
}
