package kind

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/exec"

	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision/internal/clusterregistry"
	"github.com/kubeproof/kubeproof/internal/provision/internal/imagebuild"
	"github.com/kubeproof/kubeproof/internal/provision/internal/process"
	"github.com/kubeproof/kubeproof/internal/provision/internal/registryhosts"
)

// registryAccess writes each node's containerd registry hosts (see package
// registryhosts), which containerd reads at each pull (no restart). A
// registry on this machine's loopback is reached at the node's default
// gateway, the host's address on the kind network: push to 127.0.0.1:PORT
// and let the registry listen on the gateway's address too.
func (u *bringUp) registryAccess(ctx context.Context) error {
	s := u.p.cfg.Shape
	if len(u.nodes) == 0 {
		return nil
	}
	// Every node has the same gateway: the host's end of the network.
	gw, err := nodeGateway(u.nodes[0])
	if err != nil {
		return err
	}
	u.nodeRegistry = registryhosts.NodeAddress(s, gw)
	files := registryhosts.Files(s, gw)
	if !slices.Contains(u.p.cfg.Without, Registry) {
		if err := u.startRegistry(ctx, gw); err != nil {
			return err
		}
		// The cluster's own registry speaks plain HTTP.
		full, shaped := u.registry.Addresses()
		files[full], files[shaped] = registryhosts.PlainHTTP(full), registryhosts.PlainHTTP(shaped)
	}
	for host, file := range files {
		if s.ImageRegistry != "" && strings.HasPrefix(s.ImageRegistry, host) {
			u.p.cfg.Progress.Infof("the nodes pull %s from %s: a registry on this machine must listen there too", s.ImageRegistry, registryhosts.Server(file))
		}
	}
	archive, err := imagebuild.Tar(hostsFiles(files))
	if err != nil {
		return fmt.Errorf("pack the registry configuration: %w", err)
	}
	// One command per node, all nodes at once: each docker exec costs a
	// quarter of a second here.
	var g errgroup.Group
	for _, n := range u.nodes {
		g.Go(func() error {
			cmd := n.Command("sh", "-c", "mkdir -p "+certsDir+" && tar -x -C "+certsDir+" -f -").SetStdin(bytes.NewReader(archive))
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("write the registry configuration of node %s: %w", n, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// startRegistry starts the cluster's registry (package clusterregistry)
// at the nodes' gateway, this machine's address on the kind network, which
// every kind cluster's nodes share: at the first two free ports from
// clusterregistry.DefaultPort that leave out the port of a registry of the
// user's (--image-registry on this machine). The process is in the state before it
// starts to answer, so that down stops it after a failure too (it also
// finds it by its command line, which names the cluster's directory).
func (u *bringUp) startRegistry(ctx context.Context, gw string) error {
	c, l := u.p.cfg, u.p.l
	started := time.Now()
	port, err := clusterregistry.FreePort(gw, clusterregistry.DefaultPort, clusterregistry.UserPort(c.ImageRegistry, gw))
	if err != nil {
		return err
	}
	reg := clusterregistry.Spec{Host: gw, Port: port, Rate: clusterregistry.DefaultRate,
		Dir: l.registryDir(), AccessLog: l.registryAccessLog(),
		Link: fmt.Sprintf("the kind network's bridge from the node containers to this machine (gateway %s), on this machine", gw)}
	args, err := reg.Command()
	if err != nil {
		return err
	}
	proc, err := process.Start(Registry, args, l.registryLog(), nil)
	if err != nil {
		return err
	}
	u.st.Registry = &proc.Record
	if err := saveState(l, u.st); err != nil {
		return err
	}
	if err := reg.Await(ctx, 30*time.Second); err != nil {
		return fmt.Errorf("%w; log %s ends with:\n%s", err, l.registryLog(), process.Tail(l.registryLog(), 5))
	}
	dir, err := imagebuild.ProgramDir()
	if err != nil {
		return err
	}
	if err := reg.PushBase(ctx, dir, c.CacheDir); err != nil {
		return err
	}
	u.registry = &reg
	c.Progress.Infof("the cluster's registry serves at %s (and at %d bytes/s at %s), ready %s after it started",
		net.JoinHostPort(gw, fmt.Sprint(port)), reg.Rate, net.JoinHostPort(gw, fmt.Sprint(port+1)), progress.Round(time.Since(started)))
	return nil
}

// certsDir is the CRI plugin's registry.config_path on our node image.
const certsDir = "/etc/containerd/certs.d"

// hostsFiles are files (registry host -> hosts.toml) as <host>/hosts.toml,
// each under a directory of its own, in a stable order.
func hostsFiles(files map[string]string) []imagebuild.File {
	var out []imagebuild.File
	for _, host := range slices.Sorted(maps.Keys(files)) {
		out = append(out,
			imagebuild.File{Path: host + "/", Mode: 0o755},
			imagebuild.File{Path: host + "/hosts.toml", Mode: 0o644, Data: []byte(files[host])})
	}
	return out
}

// nodeGateway is the node's default gateway: this machine, on the kind
// network.
func nodeGateway(n nodes.Node) (string, error) {
	lines, err := exec.OutputLines(n.Command("ip", "-4", "route", "show", "default"))
	if err != nil {
		return "", fmt.Errorf("read the default route of node %s: %w", n, err)
	}
	for _, l := range lines {
		// default via 172.18.0.1 dev eth0
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "default" && f[1] == "via" {
			return f[2], nil
		}
	}
	return "", fmt.Errorf("node %s has no default route (%q)", n, lines)
}
