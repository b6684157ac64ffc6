package kind

import (
	"context"
	"fmt"
	"net"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
	"sigs.k8s.io/kind/pkg/exec"

	"github.com/kubeproof/kubeproof/framework/cluster"
)

// registryAccess lets every node pull from the cluster's registry
// (Shape.ImageRegistry) through containerd's hosts configuration, which
// containerd reads at each pull (no restart). A registry on this machine's
// loopback is reached at the node's default gateway, the host's address on
// the kind network: push to 127.0.0.1:PORT, and let the registry listen
// on the gateway's address too (`kubeproof status` names it).
func (u *bringUp) registryAccess(context.Context) error {
	s := u.p.cfg.Shape
	if s.ImageRegistry == "" {
		return nil
	}
	for _, n := range u.nodes {
		gw, err := nodeGateway(n)
		if err != nil {
			return err
		}
		host, file := hostsTOML(s, gw)
		if file == "" {
			continue
		}
		if err := nodeutils.WriteFile(n, "/etc/containerd/certs.d/"+host+"/hosts.toml", file); err != nil {
			return fmt.Errorf("write the registry configuration of node %s: %w", n, err)
		}
		if n == u.nodes[0] {
			u.p.cfg.Progress.Infof("the nodes pull %s from %s", s.ImageRegistry, serverOf(file))
		}
	}
	return nil
}

// hostsTOML is the containerd hosts file for the registry of s as seen
// from a node whose gateway to this machine is gw, and the registry host it
// is for; an empty file when the node needs none (a secure registry not on
// this machine).
func hostsTOML(s cluster.Shape, gw string) (host, file string) {
	host, _, _ = strings.Cut(s.ImageRegistry, "/")
	server := host
	if h, port, err := net.SplitHostPort(host); err == nil && isLoopback(h) {
		server = net.JoinHostPort(gw, port)
	} else if isLoopback(host) {
		server = gw
	}
	if server == host && !s.InsecureRegistry {
		return host, ""
	}
	scheme := "https"
	if s.InsecureRegistry {
		scheme = "http"
	}
	return host, fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n  skip_verify = %t\n",
		scheme+"://"+server, scheme+"://"+server, s.InsecureRegistry)
}

func isLoopback(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
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

// serverOf is the server line's value of a hosts file.
func serverOf(file string) string {
	first, _, _ := strings.Cut(file, "\n")
	return strings.Trim(strings.TrimPrefix(first, "server = "), `"`)
}
