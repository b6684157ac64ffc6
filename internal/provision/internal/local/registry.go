package local

import (
	"context"
	"fmt"
	"time"

	"github.com/kubeproof/kubeproof/internal/provision/internal/clusterregistry"
)

// The cluster's registry (component Registry, package clusterregistry)
// listens on the link's host address only, which the node reaches through
// its veth and nothing beyond this machine is routed to: RegistryPort at
// full speed, and the next port at most RegistryShapedRate bytes per
// second.

// registry is the cluster's registry.
func (c Config) registry(l layout) clusterregistry.Spec {
	return clusterregistry.Spec{
		Host: c.network().hostIP.String(), Port: c.RegistryPort, Rate: c.RegistryShapedRate,
		Dir: l.registryDir(), AccessLog: l.registryAccessLog(),
		Link: fmt.Sprintf("the node's veth to the host end of its link (%s, interface %s), on this machine", c.network().hostIP, l.hostVeth()),
		Args: c.ComponentArgs[Registry],
	}
}

// registryAddress is host:port of the registry at full speed, and shaped
// that of the slow one.
func (c Config) registryAddress() (full, shaped string) {
	return c.registry(layout{name: c.Name}).Addresses()
}

// registryComponent is the registry's process.
func registryComponent(c Config, l layout) (component, error) {
	args, err := c.registry(l).Command()
	if err != nil {
		return component{}, err
	}
	return component{name: Registry, args: args}, nil
}

// startRegistry adds the registry to the components (before any goroutine
// reads them), starts it beside etcd and the API server and
// puts the test app's image into it; the channel tells when that is done.
func (u *bringUp) startRegistry(ctx context.Context) (<-chan error, error) {
	done := make(chan error, 1)
	c, l := u.p.cfg, u.p.l
	if !c.Runs(Registry) {
		done <- nil
		return done, nil
	}
	comp, err := registryComponent(c, l)
	if err != nil {
		return nil, err
	}
	u.byName[Registry] = comp
	reg := c.registry(l)
	go func() {
		err := u.startAndWait(ctx, Registry, componentTimeout, reg.Answers)
		if err == nil {
			err = u.pushBase(ctx, reg)
		}
		done <- err
	}()
	return done, nil
}

// pushBase pushes the test app's image and records it as a step.
func (u *bringUp) pushBase(ctx context.Context, reg clusterregistry.Spec) error {
	c := u.p.cfg
	started := time.Now()
	dir, err := programDir(c)
	if err != nil {
		return err
	}
	if err := reg.PushBase(ctx, dir, c.CacheDir); err != nil {
		return err
	}
	u.s.readyAs("registry image "+clusterregistry.BaseImage(), Registry, started)
	return nil
}
