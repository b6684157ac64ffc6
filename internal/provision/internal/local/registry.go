package local

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/framework/images"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision/internal/imagebuild"
)

// The cluster's registry (component Registry): `kubeproof registry serve`
// on the host end of the node's link, for as long as the cluster lives.
// The images the other specs run stay loaded into the node (ctr import,
// the fastest way to a node that has them); the registry holds what the
// pull specs need: images no node has, which the node must download.
//
// It listens on the link's host address only, which the node reaches
// through its veth and nothing beyond this machine is routed to, at two
// ports: RegistryPort at full speed, and the next one at most
// RegistryShapedRate bytes per second (a slow link made by the server).

// registryRepository is the path our images take in the registry.
const registryRepository = "kubeproof"

// registryAddress is host:port of the registry at full speed, and shaped
// that of the slow one.
func (c Config) registryAddress() (full, shaped string) {
	host := c.network().hostIP.String()
	return net.JoinHostPort(host, strconv.Itoa(c.RegistryPort)), net.JoinHostPort(host, strconv.Itoa(c.RegistryPort+1))
}

// registryComponent is the registry's process: this kubeproof, serving.
func registryComponent(c Config, l layout) (component, error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return component{}, fmt.Errorf("locate kubeproof, which serves the cluster's registry: %w", err)
	}
	full, shaped := c.registryAddress()
	return component{name: Registry, args: append([]string{exe, "registry", "serve",
		"--listen", full, "--shaped-listen", shaped, "--shaped-rate", strconv.FormatInt(c.RegistryShapedRate, 10),
		"--dir", l.registryDir(), "--access-log", l.registryAccessLog(),
	}, c.ComponentArgs[Registry]...)}, nil
}

// registryAnswers is the registry's health check: its API version
// endpoint answers as a distribution registry does (the header), so that
// another server on the port is not taken for it.
func registryAnswers(addr string) func(context.Context) (string, error) {
	url := "http://" + addr + "/v2/"
	return func(ctx context.Context) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return "", err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		resp.Body.Close()
		if v := resp.Header.Get("Docker-Distribution-API-Version"); resp.StatusCode != http.StatusOK || v != "registry/2.0" {
			return "", fmt.Errorf("GET %s: HTTP %d, API version %q: not a registry", url, resp.StatusCode, v)
		}
		return "registry/2.0", nil
	}
}

// startRegistry starts the registry beside etcd and the API server and
// puts the test app's image into it; the channel tells when that is done.
func (u *bringUp) startRegistry(ctx context.Context) <-chan error {
	done := make(chan error, 1)
	c := u.p.cfg
	if !c.Runs(Registry) {
		done <- nil
		return done
	}
	go func() {
		full, _ := c.registryAddress()
		err := u.startAndWait(ctx, Registry, componentTimeout, registryAnswers(full))
		if err == nil {
			err = u.pushBase(ctx, full)
		}
		done <- err
	}()
	return done
}

// pushBase pushes the test app's image, from which the pull specs make
// images of their own, and records it as a step.
func (u *bringUp) pushBase(ctx context.Context, addr string) error {
	c := u.p.cfg
	started := time.Now()
	dir, err := programDir(c)
	if err != nil {
		return err
	}
	built, err := imagebuild.Load(images.TestApp, dir, c.CacheDir)
	if err != nil {
		return err
	}
	if _, _, err := built.Push(ctx, addr+"/"+registryRepository, true); err != nil {
		return exitcode.With(exitcode.ClusterSetup, fmt.Errorf("push the test app's image into the cluster's registry: %w", err))
	}
	u.s.readyAs("registry image "+registryRepository+"/testapp", Registry, started)
	return nil
}

// pullRegistry describes the cluster's registry for the specs.
func (c Config) pullRegistry(l layout) cluster.PullRegistry {
	full, shaped := c.registryAddress()
	link := fmt.Sprintf("the node's veth to the host end of its link (%s, interface %s), on this machine: no bandwidth limit", c.network().hostIP, l.hostVeth())
	return cluster.PullRegistry{
		Address: full, Link: link,
		Shaped: shaped, ShapedRate: c.RegistryShapedRate,
		AccessLog: l.registryAccessLog(),
		Base:      images.InRegistry(images.TestApp, full+"/"+registryRepository),
	}
}
