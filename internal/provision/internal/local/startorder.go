package local

// The components' start order: containerd and the registry beside etcd
// and the API server, then the controller manager, the scheduler, the node
// and kube-proxy.

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kubeproof/kubeproof/internal/provision/internal/process"
)

// startComponents starts the components, each recorded when it is ready:
// containerd beside etcd and the API server, then the controller manager,
// the scheduler and the node.
func (u *bringUp) startComponents(ctx context.Context) error {
	c, l := u.p.cfg, u.p.l
	u.s = &starter{st: u.st, l: l, steps: u.steps, procs: map[string]*process.Proc{}}
	u.byName = map[string]component{}
	for _, comp := range components(c, l, u.bin) {
		u.byName[comp.name] = comp
	}
	var err error
	if u.admin, err = adminClient(l); err != nil {
		return err
	}
	// The registry's component is added to byName before any goroutine
	// reads the map: startRuntime's does.
	registryReady, err := u.startRegistry(ctx)
	if err != nil {
		return err
	}
	runtimeReady := u.startRuntime(ctx)
	if err := u.startEtcdAndAPIServer(ctx); err != nil {
		return err
	}
	if err := u.startTheRest(ctx, runtimeReady); err != nil {
		return err
	}
	return <-registryReady
}

// startAndWait starts the named component and waits until check passes;
// a component left out (--without) is passed over.
func (u *bringUp) startAndWait(ctx context.Context, name string, timeout time.Duration, check func(context.Context) (string, error)) error {
	comp, ok := u.byName[name]
	if !ok {
		return nil
	}
	started := time.Now()
	if _, err := u.s.start(comp); err != nil {
		return err
	}
	if err := u.s.waitReady(ctx, name, timeout, check); err != nil {
		return err
	}
	u.s.ready(name, started)
	return nil
}

// startRuntime starts containerd and imports the images into it, beside
// etcd and the API server; the channel tells when that is done.
func (u *bringUp) startRuntime(ctx context.Context) <-chan error {
	runtimeReady := make(chan error, 1)
	go func() {
		err := u.startAndWait(ctx, Containerd, componentTimeout, func(ctx context.Context) (string, error) { return ctr(ctx, u.bin, u.p.l, "version") })
		if err == nil {
			err = importImages(ctx, u.bin, u.p.l, u.tars)
		}
		runtimeReady <- err
	}()
	return runtimeReady
}

// startEtcdAndAPIServer starts etcd's members together (none is healthy
// before a majority of them runs) and the API server (never left out) with
// them: it builds its handlers (1.5 s of CPU here) while etcd comes up,
// and connects once etcd answers.
func (u *bringUp) startEtcdAndAPIServer(ctx context.Context) error {
	c, l, s := u.p.cfg, u.p.l, u.s
	etcdStarted := time.Now()
	for _, m := range c.etcdMembers(l) {
		if _, err := s.start(u.byName[m.name]); err != nil {
			return err
		}
	}
	apiStarted := time.Now()
	if _, err := s.start(u.byName[APIServer]); err != nil {
		return err
	}
	for _, m := range c.etcdMembers(l) {
		if err := s.waitReady(ctx, m.name, etcdTimeout, etcdHealthy(c, m)); err != nil {
			return err
		}
		s.ready(m.name, etcdStarted)
	}
	if err := s.waitReady(ctx, APIServer, apiServerTimeout, apiServerReady(u.admin)); err != nil {
		return err
	}
	s.ready(APIServer, apiStarted)
	return nil
}

// startTheRest starts the controller manager and the scheduler, the node
// once the runtime is ready, and kube-proxy once the node is registered.
func (u *bringUp) startTheRest(ctx context.Context, runtimeReady <-chan error) error {
	c, nw := u.p.cfg, u.p.cfg.network()
	g, gctx := errgroup.WithContext(ctx)
	nodeKnown := make(chan struct{})
	for _, cp := range []struct {
		name string
		port int
	}{{ControllerManager, c.ControllerManagerPort}, {Scheduler, c.SchedulerPort}} {
		g.Go(func() error {
			return u.startAndWait(ctx, cp.name, componentTimeout, httpsHealthy(net.JoinHostPort(nw.hostIP.String(), strconv.Itoa(cp.port))))
		})
	}
	g.Go(func() error {
		select {
		case err := <-runtimeReady:
			if err != nil {
				return err
			}
		case <-gctx.Done():
			return gctx.Err()
		}
		return u.startNode(gctx, nodeKnown)
	})
	g.Go(func() error {
		// kube-proxy reads its node's addresses when it starts and, if the
		// node is not there yet, looks again only a second later: it
		// starts once the kubelet has registered the node.
		select {
		case <-nodeKnown:
		case <-gctx.Done():
			return gctx.Err()
		}
		return u.startAndWait(ctx, KubeProxy, componentTimeout, httpHealthy(fmt.Sprintf("http://%s:10256/healthz", nw.nodeIP)))
	})
	return g.Wait()
}
