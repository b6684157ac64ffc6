// Package cni describes kubeproof's pod network: one bridge per node with
// host-local addresses from the node's pod CIDR, and, between nodes, a route
// to each other node's pod CIDR through that node's address. The local
// provider writes the configuration itself; on kind nodes the kubeproof-cni
// daemon does, and keeps the routes.
package cni

import (
	"encoding/json"
	"fmt"
	"net"
	"sort"

	"github.com/kubeproof/kubeproof/contract/cnitrace"
)

// ConfigFile is the name of the network configuration in the CNI
// configuration directory.
const ConfigFile = "10-kubeproof.conflist"

// Network says how to configure one node's pod network.
type Network struct {
	// Name is the network's name (libcni caches results under it).
	Name string
	// Bridge is the node's bridge device.
	Bridge string
	// PodCIDR is the node's share of the pod network.
	PodCIDR string
	// IPAMDataDir is where host-local keeps its leases ("" for its default).
	IPAMDataDir string
	// TraceLog, if set, puts kubeproof-cni-trace first and last in the
	// plugin chain, logging each call to this file on the node.
	TraceLog string
}

// TracePlugin is the trace plugin's binary name in the CNI bin directory.
const TracePlugin = cnitrace.Plugin

// Conflist is the CNI network configuration list for n: the bridge plugin
// (the node is the Pods' gateway; no masquerading, since nothing leaves the
// cluster) and port mappings (hostPort). No firewall plugin: the node's
// network namespace (a process node's own, or a kind node container's)
// forwards by default, so its per-Pod ACCEPT rules changed nothing, and it
// cost a dozen iptables runs on every ADD and DEL (about 9 CPU-seconds of a
// local run of the suites on 2 cores).
func Conflist(n Network) ([]byte, error) {
	if _, _, err := net.ParseCIDR(n.PodCIDR); err != nil {
		return nil, fmt.Errorf("node pod CIDR %q: %w", n.PodCIDR, err)
	}
	ipam := map[string]any{
		"type":   "host-local",
		"ranges": [][]map[string]string{{{"subnet": n.PodCIDR}}},
		"routes": []map[string]string{{"dst": "0.0.0.0/0"}},
	}
	if n.IPAMDataDir != "" {
		ipam["dataDir"] = n.IPAMDataDir
	}
	plugins := []any{
		map[string]any{
			"type":        "bridge",
			"bridge":      n.Bridge,
			"isGateway":   true,
			"ipMasq":      false,
			"hairpinMode": true,
			"ipam":        ipam,
		},
		map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
	}
	if n.TraceLog != "" {
		trace := func(position string) any {
			return map[string]any{"type": TracePlugin, "position": position, "log": n.TraceLog}
		}
		plugins = append(append([]any{trace("first")}, plugins...), trace("last"))
	}
	conf := map[string]any{"cniVersion": "0.4.0", "name": n.Name, "plugins": plugins}
	return json.MarshalIndent(conf, "", "  ")
}

// Peer is another node: its pod CIDR and its address.
type Peer struct {
	Name    string
	PodCIDR string
	Address string
}

// Route sends a pod CIDR to a gateway.
type Route struct {
	Dst string
	Via string
}

// Routes returns the routes a node needs to reach its peers' Pods: one per
// peer with a pod CIDR whose address is on a network the node is directly
// attached to (others, such as Node objects without a machine behind them,
// cannot be routed to and are left out). The result is sorted by Dst.
func Routes(self string, peers []Peer, attached []*net.IPNet) []Route {
	var out []Route
	for _, p := range peers {
		if p.Name == self || p.PodCIDR == "" || p.Address == "" {
			continue
		}
		if _, _, err := net.ParseCIDR(p.PodCIDR); err != nil {
			continue
		}
		ip := net.ParseIP(p.Address)
		if ip == nil {
			continue
		}
		for _, n := range attached {
			if n.Contains(ip) {
				out = append(out, Route{Dst: p.PodCIDR, Via: p.Address})
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dst < out[j].Dst })
	return out
}
