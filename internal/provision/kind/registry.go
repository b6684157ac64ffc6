package kind

import (
	"context"
	"fmt"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
	"sigs.k8s.io/kind/pkg/exec"

	"github.com/kubeproof/kubeproof/internal/provision/registryhosts"
)

// registryAccess writes each node's containerd registry hosts (see package
// registryhosts), which containerd reads at each pull (no restart). A
// registry on this machine's loopback is reached at the node's default
// gateway, the host's address on the kind network: push to 127.0.0.1:PORT
// and let the registry listen on the gateway's address too.
func (u *bringUp) registryAccess(context.Context) error {
	s := u.p.cfg.Shape
	for i, n := range u.nodes {
		gw, err := nodeGateway(n)
		if err != nil {
			return err
		}
		// Every node has the same gateway: the host's end of the network.
		u.nodeRegistry = registryhosts.NodeAddress(s, gw)
		for host, file := range registryhosts.Files(s, gw) {
			if err := nodeutils.WriteFile(n, "/etc/containerd/certs.d/"+host+"/hosts.toml", file); err != nil {
				return fmt.Errorf("write the registry configuration of node %s: %w", n, err)
			}
			if i == 0 && s.ImageRegistry != "" && strings.HasPrefix(s.ImageRegistry, host) {
				u.p.cfg.Progress.Infof("the nodes pull %s from %s: a registry on this machine must listen there too", s.ImageRegistry, registryhosts.Server(file))
			}
		}
	}
	return nil
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
