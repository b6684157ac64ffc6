// Package cluster is the contract between the specs and the clusters they
// check: the Info suites read to reach a cluster and to know what it can
// do (its capabilities), the Provider behind it with its optional
// abilities, and Open, which finds that provider from the Info. How a
// cluster is made (its shape, the providers' options, the table of
// providers) is the provisioning side's, internal/provision; this package
// speaks neither provisioning nor the CLI (no exit codes, no flag names),
// so that a spec stands on it alone.
//
// Providers differ in what they expose. A check that needs something a
// provider lacks (the audit log, etcd, control-plane flags) skips with the
// capability's reason; it never fails or fakes a result.
package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/kubeproof/kubeproof/contract/childproc"
)

// Capability is something beyond the Kubernetes API that a provider offers.
type Capability string

const (
	// AuditLog: the API server's audit log file is readable by the harness.
	AuditLog Capability = "AuditLog"
	// EtcdAccess: etcd is reachable with a client certificate.
	EtcdAccess Capability = "EtcdAccess"
	// ControlPlaneFlags: component flags can be set when the cluster is made.
	ControlPlaneFlags Capability = "ControlPlaneFlags"
	// LoadImage: kubeproof's images are loaded into every node.
	LoadImage Capability = "LoadImage"
	// NodeExec: commands can run on a node, in its namespaces.
	NodeExec Capability = "NodeExec"
	// ClusterCA: the cluster CA's key is available to sign client certificates.
	ClusterCA Capability = "ClusterCA"
	// RegistryPull: kubeproof serves a registry beside the cluster
	// (Info.PullRegistry) that the nodes pull from and the specs push
	// images of their own to, which no node has until it pulls them.
	RegistryPull Capability = "RegistryPull"
	// Disposable: nobody but kubeproof uses the cluster (it made it, or its
	// user said so), so specs may change what other
	// users would notice: add Nodes, label real ones, compact etcd, bind
	// RBAC roles in default.
	Disposable Capability = "Disposable"
)

// Capabilities are every capability a provider can offer, for checking
// the names a claims file gives.
var Capabilities = []Capability{AuditLog, EtcdAccess, ControlPlaneFlags, LoadImage, NodeExec, ClusterCA, RegistryPull, Disposable}

// Info is everything a suite needs to use a running cluster. Providers write
// it when they bring a cluster up; suites read it (possibly in another
// process) through Load.
type Info struct {
	// SchemaVersion names the shape of cluster.json (InfoSchema); Save
	// sets it. Within a version fields are only added.
	SchemaVersion     string       `json:"schemaVersion"`
	Provider          string       `json:"provider"`
	Name              string       `json:"name"`
	Kubeconfig        string       `json:"kubeconfig"`
	Context           string       `json:"context,omitempty"`
	KubernetesVersion string       `json:"kubernetesVersion,omitempty"`
	Capabilities      []Capability `json:"capabilities"`
	// Reasons says, for capabilities the provider lacks, why.
	Reasons map[Capability]string `json:"reasons,omitempty"`
	// ImageRegistry is where the nodes pull the images the specs run from,
	// when they are not loaded into them ("" for loaded images).
	ImageRegistry string `json:"imageRegistry,omitempty"`
	// ImageTag is the images' tag in ImageRegistry: the version of the
	// kubeproof whose images they are.
	ImageTag string `json:"imageTag,omitempty"`
	// NodeRegistry is the address (host:port) at which the nodes reach a
	// registry on this machine's loopback: one serving them must listen
	// there too (`kubeproof env` prints it as KUBEPROOF_NODE_REGISTRY).
	NodeRegistry string `json:"nodeRegistry,omitempty"`
	// PullRegistry is the registry kubeproof serves beside the cluster,
	// set with RegistryPull.
	PullRegistry *PullRegistry `json:"pullRegistry,omitempty"`
	// Kubectl is a kubectl binary matching the cluster's version, if known.
	Kubectl string `json:"kubectl,omitempty"`
	// AuditLogPath is set with AuditLog.
	AuditLogPath string `json:"auditLogPath,omitempty"`
	// Etcd is set with EtcdAccess.
	Etcd *EtcdClient `json:"etcd,omitempty"`
	// CA is set with ClusterCA.
	CA *KeyPairFiles `json:"ca,omitempty"`
	// ContainerdAddress is the node's containerd socket, with NodeExec.
	ContainerdAddress string `json:"containerdAddress,omitempty"`
	// Ctr is containerd's CLI on the node, of the node's containerd
	// release (with NodeExec); empty means ctr from the node's PATH.
	Ctr string `json:"ctr,omitempty"`
	// NodeExec says how to run a command on a node, in the node's network
	// namespace; set exactly when the cluster has the NodeExec capability.
	NodeExec *NodeExecSpec `json:"nodeExec,omitempty"`
	// CNITraceLog is the file, on each node (NodeExec), where the pod
	// network's kubeproof-cni-trace plugin logs every CNI call.
	CNITraceLog string `json:"cniTraceLog,omitempty"`
	// NodeLayout says where the nodes keep things (with NodeExec); nil
	// when the provider does not know (a cluster it did not make).
	NodeLayout *NodeLayout `json:"nodeLayout,omitempty"`
	// Endpoints are the secure endpoints of control-plane components that
	// this machine reaches (component name -> https://host:port), for
	// their /metrics and /configz; a client certificate of system:masters
	// is let in. Their serving certificates are their own, self-signed.
	Endpoints map[string]string `json:"endpoints,omitempty"`
	// Nodes are the cluster's node names (those the provider created, or
	// for an existing cluster those the API lists).
	Nodes []string `json:"nodes,omitempty"`
	// NodeCgroups says how the nodes' cgroups are made on the machine
	// they run on (cgroup v1 or v2, the controllers offered and lacking,
	// the kubelet's driver), when the provider made the nodes.
	NodeCgroups string `json:"nodeCgroups,omitempty"`
	// Components maps a control-plane component to when it became ready.
	Components []ComponentStatus `json:"components,omitempty"`
	CreatedAt  time.Time         `json:"createdAt"`
}

// EtcdClient says how to reach etcd as a client.
type EtcdClient struct {
	Endpoints []string     `json:"endpoints"`
	Client    KeyPairFiles `json:"client"`
	CAFile    string       `json:"caFile"`
	Etcdctl   string       `json:"etcdctl,omitempty"`
}

// NodeExecSpec is how commands reach a node.
type NodeExecSpec struct {
	// Prefix comes before the command; NodePlaceholder in it stands for the
	// node's name.
	Prefix []string `json:"prefix,omitempty"`
	// Env is added to the command's environment.
	Env []string `json:"env,omitempty"`
}

// NodePlaceholder is replaced by a node's name in NodeExec.Prefix.
const NodePlaceholder = "{node}"

// NodeCommand returns the command line and extra environment that run args
// on node.
func (i *Info) NodeCommand(node string, args ...string) (argv, env []string) {
	for _, p := range i.NodeExec.Prefix {
		argv = append(argv, strings.ReplaceAll(p, NodePlaceholder, node))
	}
	return append(argv, args...), i.NodeExec.Env
}

// RunOnNode runs args on node (NodeExec) and returns its standard output.
func (i *Info) RunOnNode(ctx context.Context, node string, args ...string) ([]byte, error) {
	if !i.Has(NodeExec) || i.NodeExec == nil {
		return nil, errors.New(i.Missing(NodeExec))
	}
	argv, env := i.NodeCommand(node, args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = childproc.Attr() // dies with the spec process
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s on node %s: %w: %s", strings.Join(args, " "), node, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// KeyPairFiles names a PEM certificate and key on disk.
type KeyPairFiles struct {
	CertFile string `json:"certFile"`
	KeyFile  string `json:"keyFile"`
}

// ComponentStatus records one component of a provider-made cluster.
type ComponentStatus struct {
	Name string `json:"name"`
	// Process and PID name the process behind the step, if one is.
	Process string        `json:"process,omitempty"`
	PID     int           `json:"pid,omitempty"`
	Started time.Time     `json:"started"`
	ReadyIn time.Duration `json:"readyIn"`
	Log     string        `json:"log,omitempty"`
}

// Has reports whether the cluster offers c.
func (i *Info) Has(c Capability) bool { return slices.Contains(i.Capabilities, c) }

// Missing explains why the cluster lacks c (empty if it has it).
func (i *Info) Missing(c Capability) string {
	if i.Has(c) {
		return ""
	}
	if r := i.Reasons[c]; r != "" {
		return fmt.Sprintf("provider %s lacks capability %s: %s", i.Provider, c, r)
	}
	return fmt.Sprintf("provider %s lacks capability %s", i.Provider, c)
}

// PullRegistry is a registry kubeproof serves on the machine that runs it,
// beside a cluster it made, for as long as the cluster lives: the nodes
// pull from it, and the specs push images to it that no node has, so that
// a Pod's image is downloaded (the first pull, its events and its time).
type PullRegistry struct {
	// Address is host:port, the same for this machine and the nodes: the
	// specs push to it, the Pods' images name it.
	Address string `json:"address"`
	// Link says what lies between the nodes and Address, for the verdicts
	// of the times measured over it.
	Link string `json:"link"`
	// Shaped is the same registry at another host:port that sends at most
	// ShapedRate bytes per second: a slow link ("" without one), which
	// ShapedLink describes.
	Shaped     string `json:"shaped,omitempty"`
	ShapedRate int64  `json:"shapedRate,omitempty"`
	ShapedLink string `json:"shapedLink,omitempty"`
	// AccessLog is the file, on this machine, where the registry logs
	// every request it answered (package registrylog's format).
	AccessLog string `json:"accessLog,omitempty"`
	// Base is an image in it (host:port/repository:tag) of kubeproof's
	// test app, from which the specs make images of their own.
	Base string `json:"base"`
}

// ServesPulls records the registry kubeproof serves beside the cluster,
// and with it RegistryPull.
func (i *Info) ServesPulls(r PullRegistry) {
	i.PullRegistry = &r
	if !i.Has(RegistryPull) {
		i.Capabilities = append(i.Capabilities, RegistryPull)
	}
	delete(i.Reasons, RegistryPull)
}

// PullsFrom records that the nodes pull the images the specs run from
// registry reg, tagged tag; loaded says they also have them loaded (the Pods then keep
// using the loaded names). It is not RegistryPull: kubeproof pushes no
// images of the specs' own there.
func (i *Info) PullsFrom(reg, tag string, loaded bool) {
	if reg == "" {
		return
	}
	if !loaded {
		i.ImageRegistry, i.ImageTag = reg, tag
	}
	if !i.Has(RegistryPull) {
		if i.Reasons == nil {
			i.Reasons = map[Capability]string{}
		}
		i.Reasons[RegistryPull] = "the nodes pull kubeproof's images from " + reg + " once; the specs push images of their own (which no node has) only to a registry kubeproof serves beside a cluster it made (the local and kind providers)"
	}
}

// Save writes the info as JSON.
func (i *Info) Save(path string) error {
	i.SchemaVersion = InfoSchema
	data, err := json.MarshalIndent(i, "", "  ")
	if err != nil {
		return fmt.Errorf("encode cluster info: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("write cluster info: %w", err)
	}
	return nil
}

// InfoSchema names the shape of cluster.json (Info).
const InfoSchema = "kubeproof.io/cluster/v1"

// Load reads info written by Save.
func Load(path string) (*Info, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read cluster info: %w", err)
	}
	var i Info
	if err := json.Unmarshal(data, &i); err != nil {
		return nil, fmt.Errorf("parse cluster info %s: %w", path, err)
	}
	return &i, nil
}
