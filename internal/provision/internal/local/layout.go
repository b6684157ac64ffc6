package local

import (
	"path/filepath"
)

// Root directories of all local clusters. Each cluster owns one directory
// below each root, named after it; `down` removes both.
const (
	DataRoot = "/var/lib/kubeproof"
	RunRoot  = "/run/kubeproof"
)

// layout names every path and kernel object of one cluster. It is derived
// from the name alone, so that `down` can find everything even when the state
// file is damaged.
type layout struct {
	name string
}

func (l layout) dataDir() string           { return filepath.Join(DataRoot, l.name) }
func (l layout) runDir() string            { return filepath.Join(RunRoot, l.name) }
func (l layout) stateFile() string         { return filepath.Join(l.dataDir(), "state.json") }
func (l layout) infoFile() string          { return filepath.Join(l.dataDir(), "cluster.json") }
func (l layout) pkiDir() string            { return filepath.Join(l.dataDir(), "pki") }
func (l layout) pki(name string) string    { return filepath.Join(l.pkiDir(), name) }
func (l layout) confDir() string           { return filepath.Join(l.dataDir(), "conf") }
func (l layout) conf(name string) string   { return filepath.Join(l.confDir(), name) }
func (l layout) logDir() string            { return filepath.Join(l.dataDir(), "logs") }
func (l layout) log(comp string) string    { return filepath.Join(l.logDir(), comp+".log") }
func (l layout) etcdDataDir() string       { return filepath.Join(l.dataDir(), "etcd") }
func (l layout) auditLog() string          { return filepath.Join(l.dataDir(), "audit", "audit.log") }
func (l layout) kubeletRoot() string       { return filepath.Join(l.dataDir(), "kubelet") }
func (l layout) podLogs() string           { return filepath.Join(l.dataDir(), "pod-logs") }
func (l layout) staticPods() string        { return filepath.Join(l.dataDir(), "manifests") }
func (l layout) containerdRoot() string    { return filepath.Join(l.dataDir(), "containerd") }
func (l layout) containerdState() string   { return filepath.Join(l.runDir(), "containerd") }
func (l layout) containerdSock() string    { return filepath.Join(l.runDir(), "containerd.sock") }
func (l layout) runcRoot() string          { return filepath.Join(l.runDir(), "runc") }
func (l layout) cniConfDir() string        { return filepath.Join(l.dataDir(), "cni", "net.d") }
func (l layout) cniIPAMDir() string        { return filepath.Join(l.dataDir(), "cni", "ipam") }
func (l layout) cniBinDir() string         { return filepath.Join(l.dataDir(), "cni", "bin") }
func (l layout) cniTraceLog() string       { return filepath.Join(l.dataDir(), "cni", "calls.jsonl") }
func (l layout) registryHostsDir() string  { return filepath.Join(l.dataDir(), "containerd-hosts") }
func (l layout) adminKubeconfig() string   { return filepath.Join(l.dataDir(), "kubeconfig") }
func (l layout) registryDir() string       { return filepath.Join(l.dataDir(), "registry") }
func (l layout) registryAccessLog() string { return filepath.Join(l.logDir(), "registry-access.jsonl") }

// netns is the node's network namespace (a file under /run/netns).
func (l layout) netns() string     { return "kubeproof-" + l.name }
func (l layout) netnsPath() string { return filepath.Join("/run/netns", l.netns()) }

// Interface names are at most 15 bytes; the cluster name is at most 20, so
// the host side uses a short hash-free prefix plus a truncated name.
func (l layout) hostVeth() string { return truncate("kp-"+l.name, 15) }

// nodeVeth is the node side's name inside the node namespace.
const nodeVeth = "eth0"

// serviceSink is an interface in the node namespace that the Service CIDR is
// routed to: kube-proxy's OUTPUT rules need a route to exist, and without
// kube-proxy, Service traffic ends there instead of leaving. It is an ifb
// device, which drops whatever is sent to it: kernels without the dummy
// module (like this VM's) still have ifb.
const serviceSink = "kp-services"

// cgroupName is the kubelet's cgroupRoot, created below every hierarchy.
func (l layout) cgroupName() string { return "kubeproof-" + l.name }

// nodeName is the Kubernetes name of the node.
func (l layout) nodeName() string { return l.name + "-node" }

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
