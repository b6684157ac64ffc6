package podflow

import (
	"context"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/cluster"
)

// The TCP connections the kubelet of the Pod's node holds, read on the node
// (ss, in the node's network namespace): whom it talks to. Seed 002 has the
// kubelet notice its node name "in etcd"; a kubelet that read etcd would
// hold a connection to one of etcd's client endpoints.
type kubeletConnectionsEvidence struct {
	// Total counts the kubelet's established TCP connections (its API
	// server connection among them: the reading sees the kubelet).
	Total int `json:"total"`
	// ToEtcd counts those to one of etcd's client endpoints (their port,
	// when the cluster's etcd is not reachable from here: 2379).
	ToEtcd int `json:"toEtcd"`
	// Peers are the addresses the kubelet is connected to, once each.
	Peers []string `json:"peers"`
}

var kubeletConnections = framework.DeclareEvidence[kubeletConnectionsEvidence]("kubeletConnections", specCreate)

// ssProcess is the process column of `ss -p`: users:(("kubelet",pid=1,fd=2)).
var ssProcess = regexp.MustCompile(`users:\(\("([^"]+)"`)

// recordKubeletConnections reads, on node, which TCP peers the kubelet is
// connected to.
func recordKubeletConnections(ctx context.Context, f *framework.Framework, node string) {
	ginkgo.GinkgoHelper()
	if !f.Cluster.Has(cluster.NodeExec) {
		kubeletConnections.Unobservable("%s", f.Cluster.Missing(cluster.NodeExec))
		return
	}
	out, err := f.Cluster.RunOnNode(ctx, node, "ss", "-tnpH", "state", "established")
	if err != nil {
		kubeletConnections.Unobservable("the node's connections cannot be listed (ss): %v", err)
		return
	}
	ev := kubeletConnectionsEvidence{}
	etcd := etcdPorts(f.Cluster)
	for _, line := range strings.Split(string(out), "\n") {
		m := ssProcess.FindStringSubmatch(line)
		fields := strings.Fields(line)
		if m == nil || m[1] != "kubelet" || len(fields) < 4 {
			continue
		}
		peer := fields[3]
		ev.Total++
		if _, port, err := net.SplitHostPort(peer); err == nil && slices.Contains(etcd, port) {
			ev.ToEtcd++
		}
		if !slices.Contains(ev.Peers, peer) {
			ev.Peers = append(ev.Peers, peer)
		}
	}
	if ev.Total == 0 {
		kubeletConnections.Unobservable("ss on node %s listed no connection of a process named kubelet", node)
		return
	}
	kubeletConnections.Record(ev)
}

// etcdPorts are the ports of etcd's client endpoints (2379, etcd's own
// default, when the cluster does not say).
func etcdPorts(info *cluster.Info) []string {
	var ports []string
	if info.Etcd != nil {
		for _, e := range info.Etcd.Endpoints {
			if u, err := url.Parse(e); err == nil && u.Port() != "" {
				ports = append(ports, u.Port())
			}
		}
	}
	if len(ports) == 0 {
		ports = []string{"2379"}
	}
	return ports
}
