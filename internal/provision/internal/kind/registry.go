package kind

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/exec"

	"github.com/kubeproof/kubeproof/internal/provision/internal/imagebuild"
	"github.com/kubeproof/kubeproof/internal/provision/internal/registryhosts"
)

// registryAccess writes each node's containerd registry hosts (see package
// registryhosts), which containerd reads at each pull (no restart). A
// registry on this machine's loopback is reached at the node's default
// gateway, the host's address on the kind network: push to 127.0.0.1:PORT
// and let the registry listen on the gateway's address too.
func (u *bringUp) registryAccess(context.Context) error {
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
