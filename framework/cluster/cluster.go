// Package cluster defines what kubeproof needs from a Kubernetes cluster: a
// Provider that brings one up and down, and the Info suites read to reach it
// and to know what it can do.
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
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kubeproof/kubeproof/internal/exitcode"
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
	// RegistryPull: nodes pull images from a registry the harness can fill.
	RegistryPull Capability = "RegistryPull"
	// Disposable: nobody but kubeproof uses the cluster (it made it, or its
	// user said so with --disposable), so specs may change what other
	// users would notice: add Nodes, label real ones, compact etcd, bind
	// RBAC roles in default.
	Disposable Capability = "Disposable"
)

// Info is everything a suite needs to use a running cluster. Providers write
// it when they bring a cluster up; suites read it (possibly in another
// process) through Load.
type Info struct {
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
	// NodeRegistry is the address (host:port) at which the nodes reach a
	// registry on this machine's loopback: one serving them must listen
	// there too (`kubeproof env` prints it as KUBEPROOF_NODE_REGISTRY).
	NodeRegistry string `json:"nodeRegistry,omitempty"`
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
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // dies with the spec process
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

// PullsFrom records that the nodes pull the images the specs run from
// registry reg; loaded says they also have them loaded (the Pods then keep
// using the loaded names).
func (i *Info) PullsFrom(reg string, loaded bool) {
	if reg == "" {
		return
	}
	if !i.Has(RegistryPull) {
		i.Capabilities = append(i.Capabilities, RegistryPull)
	}
	delete(i.Reasons, RegistryPull)
	if !loaded {
		i.ImageRegistry = reg
	}
}

// Save writes the info as JSON.
func (i *Info) Save(path string) error {
	data, err := json.MarshalIndent(i, "", "  ")
	if err != nil {
		return fmt.Errorf("encode cluster info: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("write cluster info: %w", err)
	}
	return nil
}

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

// Provider brings one cluster up and down.
type Provider interface {
	// Name is the provider's name, as given to --provider.
	Name() string
	// Up makes the cluster (or checks that it is reachable) and returns its
	// info. On failure it leaves nothing behind.
	Up(ctx context.Context) (*Info, error)
	// Down removes everything Up made. It succeeds when there is nothing to
	// remove, and cleans up after a crashed or interrupted Up.
	Down(ctx context.Context) error
	// Info returns the info of a cluster that is up, or an error that says
	// it is not.
	Info(ctx context.Context) (*Info, error)
	// Status describes the cluster's parts for humans.
	Status(ctx context.Context) (Status, error)
}

// Status is a human-oriented snapshot of a cluster.
type Status struct {
	Up    bool
	Lines []StatusLine
}

// StatusLine is one part of a cluster and its state.
type StatusLine struct {
	Part   string
	State  string
	Detail string
}

// InfoFiler is a provider that keeps its cluster's Info in a file, for the
// spec runner's --kubeproof.cluster-info.
type InfoFiler interface {
	InfoFile() string
}

// LogExporter is a provider that can copy its components' logs somewhere,
// for a report after a failure.
type LogExporter interface {
	ExportLogs(ctx context.Context, dir string) error
}

// APIServerStarter is a provider that can start an extra API server against
// the cluster's own etcd, with other flags: checks use it to compare a
// cluster configured one way with the same cluster configured another.
type APIServerStarter interface {
	StartAPIServer(ctx context.Context, extraArgs []string) (*APIServer, error)
}

// ComponentStopper is a provider that can stop a component of its cluster
// (the controller manager, the scheduler, etcd) and start it again as it
// was: checks use it to see what the cluster does while the component is
// gone, and how the component catches up when it is back.
type ComponentStopper interface {
	// StopComponent stops the component and returns what starts it again
	// and waits until it is healthy.
	StopComponent(ctx context.Context, name string) (start func(context.Context) error, err error)
}

// APIServer is an extra API server a provider started.
type APIServer struct {
	// URL is its address (https://host:port).
	URL string
	// CAFile verifies its serving certificate.
	CAFile string
	// AuditLogPath is its own audit log.
	AuditLogPath string
	// Stop stops it and waits until it is gone.
	Stop func() error
}

// ParseComponentArgs turns "component=--flag=value" strings into a map.
func ParseComponentArgs(specs []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, s := range specs {
		comp, arg, ok := strings.Cut(s, "=")
		if !ok || comp == "" || !strings.HasPrefix(arg, "--") {
			return nil, exitcode.Errorf(exitcode.Usage, "--component-arg %q: want COMPONENT=--flag[=value], e.g. kube-apiserver=--anonymous-auth=false", s)
		}
		out[comp] = append(out[comp], arg)
	}
	return out, nil
}

// DefaultName is the name of a cluster kubeproof makes when none is given.
const DefaultName = "kubeproof"

// DefaultKubernetesVersion is the release a cluster kubeproof makes runs
// when none is given: the newest kubeproof is tested with.
const DefaultKubernetesVersion = "v1.37.2"

// etcdReleases is the etcd kubeproof builds for each Kubernetes minor
// release: the newest patch of the etcd minor that release's kubeadm
// installs (its constants.DefaultEtcdVersion: 3.6 up to 1.36, 3.7 from 1.37).
var etcdReleases = map[string]string{
	"v1.34": "v3.6.16",
	"v1.35": "v3.6.16",
	"v1.36": "v3.6.16",
	"v1.37": "v3.7.3",
}

// SupportedKubernetesMinors are the minor releases kubeproof can build and
// run, oldest first.
func SupportedKubernetesMinors() []string {
	minors := make([]string, 0, len(etcdReleases))
	for m := range etcdReleases {
		minors = append(minors, m)
	}
	sort.Slice(minors, func(i, j int) bool { return minorNumber(minors[i]) < minorNumber(minors[j]) })
	return minors
}

// EtcdVersionFor is the etcd release that goes with a Kubernetes release
// (v1.37.2 -> v3.7.3); a release kubeproof does not know gets the newest's.
func EtcdVersionFor(kubernetesVersion string) string {
	if v, ok := etcdReleases[kubernetesMinor(kubernetesVersion)]; ok {
		return v
	}
	return etcdReleases[kubernetesMinor(DefaultKubernetesVersion)]
}

// kubernetesMinor is "v1.37" of "v1.37.2".
func kubernetesMinor(version string) string {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return version
	}
	return parts[0] + "." + parts[1]
}

func minorNumber(minor string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(minor, "v1."))
	return n
}

// DefaultCacheDir is where built binaries and images are kept:
// $KUBEPROOF_CACHE_DIR, else the user's cache directory.
func DefaultCacheDir() string {
	if d := os.Getenv("KUBEPROOF_CACHE_DIR"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "kubeproof")
	}
	return filepath.Join(os.TempDir(), "kubeproof-cache")
}

// Shape is what a provider that makes clusters is told, whichever it is:
// the cluster's name, the releases to run, where builds are cached, its
// networks, and flags and components to change or leave out.
type Shape struct {
	// Name names the cluster; clusters with different names do not collide.
	Name              string
	KubernetesVersion string
	EtcdVersion       string
	// CacheDir holds built binaries and images.
	CacheDir string
	// PodCIDR is the cluster's pod network.
	PodCIDR string
	// ServiceCIDR is the Service ClusterIP range.
	ServiceCIDR string
	// ComponentArgs are extra flags per component; they come last, so they
	// override the provider's own.
	ComponentArgs map[string][]string
	// Without are optional components left out.
	Without []string
	// ImageRegistry is a registry the nodes pull kubeproof's images from
	// (host[:port]); with InsecureRegistry their containerd speaks plain
	// HTTP to it.
	ImageRegistry    string
	InsecureRegistry bool
	// SkipImageLoad leaves the images the specs run (images.Workloads) out
	// of the nodes, as on a cluster kubeproof did not make: they must come
	// from ImageRegistry.
	SkipImageLoad bool
	// Ephemeral: the cluster lives only as long as the command that makes
	// it (`run` without --keep, trace, bench, faults). When that command is
	// killed before it can remove it, the next command that looks at the
	// cluster removes it first (see Abandoner).
	Ephemeral bool
}

// Abandoner is a provider that can tell whether its cluster was left by a
// kubeproof command that was killed (SIGKILL) before it could remove it:
// an ephemeral cluster whose maker is gone, or one whose bring-up was cut
// short. who names the command that made it.
type Abandoner interface {
	Abandoned() (who string, abandoned bool)
}

// WithDefaults fills unset fields.
func (s Shape) WithDefaults() Shape {
	if s.Name == "" {
		s.Name = DefaultName
	}
	if s.KubernetesVersion == "" {
		s.KubernetesVersion = DefaultKubernetesVersion
	}
	if s.EtcdVersion == "" {
		s.EtcdVersion = EtcdVersionFor(s.KubernetesVersion)
	}
	if s.CacheDir == "" {
		s.CacheDir = DefaultCacheDir()
	}
	if s.PodCIDR == "" {
		s.PodCIDR = "10.244.0.0/16"
	}
	if s.ServiceCIDR == "" {
		s.ServiceCIDR = "10.96.0.0/16"
	}
	return s
}
