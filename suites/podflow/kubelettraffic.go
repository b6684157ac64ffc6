package podflow

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/audit"
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
	if !f.Has(cluster.NodeExec) {
		kubeletConnections.Unobservable("%s", f.Missing(cluster.NodeExec))
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

// What the kubelet asked the API server about Pods during the status
// window, from the audit log: does it fetch its Pods again and again (a
// poll), or hold the watch it has?
type kubeletReadsEvidence struct {
	// Reads counts its GET and LIST requests for Pods; Watches the new
	// watches of Pods it opened.
	Reads   int `json:"reads"`
	Watches int `json:"watches"`
	// Seconds is the window's length.
	Seconds float64 `json:"windowSeconds"`
	// Requests are the first few, for the report.
	Requests []string `json:"requests"`
}

var kubeletReads = framework.DeclareEvidence[kubeletReadsEvidence]("kubeletReads", specStatusWindow)

// recordKubeletReads reads the node's kubelet's requests for namespace/pod,
// and for all the Pods of its node, since from (the start of the window).
func recordKubeletReads(log *audit.Log, from audit.Offset, node, namespace, pod string, window time.Duration) {
	ginkgo.GinkgoHelper()
	// The log gives each request once: its ResponseComplete event, or a
	// watch's ResponseStarted.
	events, err := log.Since(from, audit.All(audit.By("system:node:"+node), audit.Verbs("get", "list", "watch"), func(e audit.Event) bool {
		// Its requests for this Pod, or for all the Pods of its node (a
		// list or a watch names none); other Pods' status writes, which
		// the kubelet reads before, are not about this one.
		return e.ObjectRef != nil && e.ObjectRef.Resource == "pods" && e.ObjectRef.Subresource == "" &&
			((e.ObjectRef.Namespace == namespace && e.ObjectRef.Name == pod) || e.ObjectRef.Name == "")
	}))
	framework.ExpectNoError(err, "read the kubelet's requests from the audit log")
	ev := kubeletReadsEvidence{Seconds: window.Seconds()}
	for _, e := range events {
		if e.Verb == "watch" {
			ev.Watches++
			continue
		}
		ev.Reads++
		if len(ev.Requests) < 5 {
			ev.Requests = append(ev.Requests, fmt.Sprintf("%s %s", e.Verb, e.Path()))
		}
	}
	kubeletReads.Record(ev)
}
