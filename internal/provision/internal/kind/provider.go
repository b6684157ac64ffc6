// Package kind is the kind provider: real multi-node clusters of Docker
// containers, made with kind as a Go library from a node image kubeproof
// builds offline (package nodeimage), with the harness's settings applied
// through kind's configuration: the audit log and the cluster's PKI on host
// directories, component flags through kubeadm patches, our images loaded
// into every node and kubeproof-cni as the pod network.
package kind

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision/internal/clusterregistry"
	"github.com/kubeproof/kubeproof/internal/provision/internal/config"
	"github.com/kubeproof/kubeproof/internal/provision/internal/dockerd"
	"github.com/kubeproof/kubeproof/internal/provision/internal/hostchange"
)

// ProviderName is the provider's name for --provider.
const ProviderName = "kind"

// Component names for --component-arg and --without.
const (
	APIServer         = "kube-apiserver"
	ControllerManager = "kube-controller-manager"
	Scheduler         = "kube-scheduler"
	KubeProxy         = "kube-proxy"
	Kubelet           = "kubelet"
	// Registry is the registry kubeproof serves beside the cluster, which
	// the nodes pull the pull specs' images from (registry.go).
	Registry = clusterregistry.Name
)

// Optional are the components --without can leave out.
var Optional = []string{ControllerManager, Scheduler, KubeProxy, Registry}

// Root is where kind clusters keep their host-side files.
const Root = "/var/lib/kubeproof/kind"

// Config shapes a kind cluster: the shape every provider takes, and kind's
// own node count and image.
type Config struct {
	config.Shape
	// Workers is the number of worker nodes besides the control plane.
	Workers int
	// NodeImage, if set, is used instead of kubeproof's own node image.
	NodeImage string
	// DebianMirror is the Debian mirror of kubeproof's node image (see
	// nodeimage.Options).
	DebianMirror string
	Progress     *progress.Printer
}

// Provider makes and removes one kind cluster.
type Provider struct {
	cfg Config
	l   layout
}

var (
	_ cluster.Provider    = (*Provider)(nil)
	_ cluster.LogExporter = (*Provider)(nil)
)

// New validates cfg and returns its provider.
func New(cfg Config) (*Provider, error) {
	cfg.Shape = cfg.Shape.WithDefaults()
	if cfg.Progress == nil {
		cfg.Progress = progress.Discard()
	}
	if cfg.Workers < 0 {
		return nil, exitcode.Errorf(exitcode.Usage, "--workers %d: want 0 or more", cfg.Workers)
	}
	for _, w := range cfg.Without {
		if !slices.Contains(Optional, w) {
			return nil, exitcode.Errorf(exitcode.Usage, "--without %s: the kind provider can leave out %v", w, Optional)
		}
	}
	for _, c := range []string{cfg.PodCIDR, cfg.ServiceCIDR} {
		if _, _, err := net.ParseCIDR(c); err != nil {
			return nil, exitcode.Errorf(exitcode.Usage, "bad CIDR %q: %v", c, err)
		}
	}
	return &Provider{cfg: cfg, l: layout{name: cfg.Name}}, nil
}

// Open returns the provider of a kind cluster that is up (for the spec
// runner, which gets only the cluster's info).
func Open(name string) (*Provider, error) {
	st, err := loadState(layout{name: name})
	if err != nil {
		return nil, exitcode.Errorf(exitcode.Unreachable, "kind cluster %q is not up: %v", name, err)
	}
	return &Provider{cfg: st.Config, l: layout{name: name}}, nil
}

// Name is the provider's name.
func (p *Provider) Name() string { return ProviderName }

// layout names the host-side files of one kind cluster.
type layout struct{ name string }

func (l layout) dir() string               { return filepath.Join(Root, l.name) }
func (l layout) registryDir() string       { return filepath.Join(l.dir(), "registry") }
func (l layout) registryAccessLog() string { return filepath.Join(l.dir(), "registry-access.jsonl") }
func (l layout) registryLog() string       { return filepath.Join(l.dir(), "registry.log") }
func (l layout) stateFile() string         { return filepath.Join(l.dir(), "state.json") }
func (l layout) infoFile() string          { return filepath.Join(l.dir(), "cluster.json") }
func (l layout) kubeconfig() string        { return filepath.Join(l.dir(), "kubeconfig") }
func (l layout) auditDir() string          { return filepath.Join(l.dir(), "audit") }
func (l layout) auditLog() string          { return filepath.Join(l.auditDir(), "audit.log") }
func (l layout) confDir() string           { return filepath.Join(l.dir(), "conf") }
func (l layout) pkiDir() string            { return filepath.Join(l.dir(), "pki") }
func (l layout) pki(n string) string {
	return filepath.Join(l.pkiDir(), n)
}
func (l layout) logDir() string { return filepath.Join(l.dir(), "logs") }

// hostSysctls: kubelets in kind nodes change the machine's global kernel
// settings just as the local provider's do; the same record restores them.
var hostSysctls = hostchange.Sysctls{File: "/var/lib/kubeproof/host-sysctls.json", Keys: hostchange.KubeletSysctls}

func (l layout) sysctlHolder() string { return "kind/" + l.name }

// userDockerHost is $DOCKER_HOST as kubeproof found it: kind() changes it
// for kind's docker CLI, and it is put back once the private daemon it may
// point at is stopped (a later step in the same command must not take the
// stopped daemon's address for the user's).
var userDockerHost, userSetDockerHost = os.LookupEnv("DOCKER_HOST")

// restoreDockerHost puts $DOCKER_HOST back as kubeproof found it.
func restoreDockerHost() {
	if userSetDockerHost {
		_ = os.Setenv("DOCKER_HOST", userDockerHost)
	} else {
		_ = os.Unsetenv("DOCKER_HOST")
	}
}

// kind returns kind's provider for Docker at host. kind runs the docker
// CLI, which reads DOCKER_HOST.
func (p *Provider) kind(host string) (*kindcluster.Provider, error) {
	if err := os.Setenv("DOCKER_HOST", host); err != nil {
		return nil, fmt.Errorf("set DOCKER_HOST: %w", err)
	}
	return kindcluster.NewProvider(kindcluster.ProviderWithDocker(), kindcluster.ProviderWithLogger(newLogger(p.cfg.Progress))), nil
}

// Info returns the info of the cluster if it is up.
func (p *Provider) Info(ctx context.Context) (*cluster.Info, error) {
	st, err := loadState(p.l)
	if err != nil {
		return nil, exitcode.Errorf(exitcode.Unreachable, "kind cluster %q is not up: %v", p.cfg.Name, err)
	}
	if err := dockerd.Ping(ctx, st.DockerHost); err != nil {
		return nil, exitcode.Errorf(exitcode.Unreachable, "kind cluster %q: %v", p.cfg.Name, err)
	}
	kp, err := p.kind(st.DockerHost)
	if err != nil {
		return nil, err
	}
	ns, err := kp.ListNodes(p.cfg.Name)
	if err != nil || len(ns) == 0 {
		return nil, exitcode.Errorf(exitcode.Unreachable, "kind cluster %q has no nodes in Docker at %s (%v)", p.cfg.Name, st.DockerHost, err)
	}
	info, err := cluster.Load(p.l.infoFile())
	if err != nil || st.Registry == nil || st.Registry.Alive() {
		return info, err
	}
	// Without its registry the cluster works; only what needs a download
	// cannot be checked.
	info.Capabilities = slices.DeleteFunc(info.Capabilities, func(c cluster.Capability) bool { return c == cluster.RegistryPull })
	if info.Reasons == nil {
		info.Reasons = map[cluster.Capability]string{}
	}
	info.Reasons[cluster.RegistryPull] = fmt.Sprintf("the cluster's registry (pid %d) is not running; see %s", st.Registry.PID, st.Registry.Log)
	info.PullRegistry = nil
	return info, nil
}

// Abandoned implements cluster.Abandoner: the state names a maker that is
// gone, and the cluster was ephemeral or never finished starting.
func (p *Provider) Abandoned() (string, bool) {
	st, err := loadState(p.l)
	if err != nil || st.Owner.PID == 0 || st.Owner.Alive() {
		return "", false
	}
	if st.Config.Ephemeral || !st.Ready {
		return fmt.Sprintf("kubeproof (pid %d, %s)", st.Owner.PID, strings.Join(st.Owner.Args, " ")), true
	}
	return "", false
}

// Status lists the node containers and whether the API answers.
func (p *Provider) Status(ctx context.Context) (cluster.Status, error) {
	st, err := loadState(p.l)
	if err != nil {
		return cluster.Status{Lines: []cluster.StatusLine{{Part: "cluster " + p.cfg.Name, State: "absent", Detail: err.Error()}}}, nil
	}
	kp, err := p.kind(st.DockerHost)
	if err != nil {
		return cluster.Status{}, err
	}
	s := cluster.Status{Up: true}
	ns, err := kp.ListNodes(p.cfg.Name)
	if err != nil || len(ns) == 0 {
		s.Up = false
		s.Lines = append(s.Lines, cluster.StatusLine{Part: "nodes", State: "absent", Detail: fmt.Sprint(err)})
		return s, nil
	}
	for _, n := range ns {
		role, _ := n.Role()
		ip, _, _ := n.IP()
		s.Lines = append(s.Lines, cluster.StatusLine{Part: "node " + n.String(), State: "running", Detail: role + " " + ip})
	}
	if _, err := p.Info(ctx); err != nil {
		s.Up = false
	}
	return s, nil
}

// ExportLogs copies every node's logs (kubelet, containerd, pods) into dir.
func (p *Provider) ExportLogs(ctx context.Context, dir string) error {
	st, err := loadState(p.l)
	if err != nil {
		return err
	}
	kp, err := p.kind(st.DockerHost)
	if err != nil {
		return err
	}
	out := filepath.Join(dir, "kind-logs")
	err = kp.CollectLogs(p.cfg.Name, out)
	if entries, _ := os.ReadDir(out); err != nil && len(entries) > 0 {
		// kind also asks each node's crictl for its images; kubeproof's node
		// image has no crictl (cri-tools is not available offline), so that
		// part is missing and the rest was collected.
		p.cfg.Progress.Infof("kind collected the node logs into %s, with gaps: %v", out, err)
		return nil
	}
	return err
}

// nodesOf lists the cluster's node containers and finds the control plane
// and its address among them.
func (p *Provider) nodesOf(kp *kindcluster.Provider) (all []nodes.Node, cp nodes.Node, cpIP string, err error) {
	all, err = kp.ListNodes(p.cfg.Name)
	if err != nil {
		return nil, nil, "", fmt.Errorf("list kind nodes: %w", err)
	}
	for _, n := range all {
		if role, _ := n.Role(); role == "control-plane" {
			ip, _, err := n.IP()
			if err != nil {
				return nil, nil, "", fmt.Errorf("address of %s: %w", n, err)
			}
			return all, n, ip, nil
		}
	}
	return nil, nil, "", fmt.Errorf("kind cluster %q has no control-plane node", p.cfg.Name)
}

// waitTimeout bounds waiting for the nodes to be Ready.
const waitTimeout = 5 * time.Minute

// InfoFile implements cluster.InfoFiler.
func (p *Provider) InfoFile() string { return p.l.infoFile() }

// Clusters implements cluster.Lister: every kind cluster kubeproof made on
// this machine, up, broken or left by a killed kubeproof.
func (p *Provider) Clusters() ([]string, error) { return otherClusters(""), nil }
