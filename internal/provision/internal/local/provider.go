package local

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision/internal/binaries"
	"github.com/kubeproof/kubeproof/internal/provision/internal/hostchange"
	"github.com/kubeproof/kubeproof/internal/provision/internal/process"
)

// Provider makes and removes one local cluster.
type Provider struct {
	cfg Config
	l   layout
	// cgroup is how the node's cgroups are made on this machine (decided
	// by preflight).
	cgroup hostchange.NodeCgroup
}

var _ cluster.Provider = (*Provider)(nil)

// New returns a provider for the cluster cfg describes. For a cluster that
// exists, the configuration it was made with (from its state file) is used,
// so that `down` and `status` need only the name.
func New(cfg Config) (*Provider, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Provider{cfg: cfg, l: layout{name: cfg.Name}}, nil
}

// Name implements cluster.Provider.
func (p *Provider) Name() string { return ProviderName }

// Info implements cluster.Provider: it reads the info Up wrote and checks that
// every recorded process still runs.
func (p *Provider) Info(ctx context.Context) (*cluster.Info, error) {
	st, err := loadState(p.l.stateFile())
	if err != nil {
		if isNotExist(err) {
			return nil, exitcode.Errorf(exitcode.Unreachable, "local cluster %q is not up (start it with `kubeproof up --name %s`)", p.cfg.Name, p.cfg.Name)
		}
		return nil, err
	}
	if !st.Ready {
		return nil, exitcode.Errorf(exitcode.Unreachable, "local cluster %q did not finish starting (remove it with `kubeproof down --name %s`)", p.cfg.Name, p.cfg.Name)
	}
	var registryDown *process.Record
	for _, r := range st.Processes {
		if r.Alive() {
			continue
		}
		if r.Name == Registry {
			// The registry serves the pull specs alone: without it the
			// cluster works, and only what needs a download cannot be
			// checked.
			registryDown = &r
			continue
		}
		return nil, exitcode.Errorf(exitcode.Unreachable, "local cluster %q is broken: %s (pid %d) is not running; see %s", p.cfg.Name, r.Name, r.PID, r.Log)
	}
	info, err := cluster.Load(p.l.infoFile())
	if err != nil || registryDown == nil {
		return info, err
	}
	info.Capabilities = slices.DeleteFunc(info.Capabilities, func(c cluster.Capability) bool { return c == cluster.RegistryPull })
	if info.Reasons == nil {
		info.Reasons = map[cluster.Capability]string{}
	}
	info.Reasons[cluster.RegistryPull] = fmt.Sprintf("the cluster's registry (pid %d) is not running; see %s", registryDown.PID, registryDown.Log)
	info.PullRegistry = nil
	return info, nil
}

// Abandoned implements cluster.Abandoner: the state file names a maker that
// is gone, and the cluster was ephemeral or never finished starting.
func (p *Provider) Abandoned() (string, bool) {
	st, err := loadState(p.l.stateFile())
	if err != nil || st.Owner.PID == 0 || st.Owner.Alive() {
		return "", false
	}
	if st.Config.Ephemeral || !st.Ready {
		return fmt.Sprintf("kubeproof (pid %d, %s)", st.Owner.PID, strings.Join(st.Owner.Args, " ")), true
	}
	return "", false
}

// info describes the cluster Up made.
func (p *Provider) info(bin binaries.Set) *cluster.Info {
	l, c := p.l, p.cfg
	nw := c.network()
	return &cluster.Info{
		Provider:          ProviderName,
		Name:              c.Name,
		Kubeconfig:        l.adminKubeconfig(),
		Context:           "kubeproof-" + c.Name,
		KubernetesVersion: c.KubernetesVersion,
		Capabilities: []cluster.Capability{
			cluster.AuditLog, cluster.EtcdAccess, cluster.ControlPlaneFlags,
			cluster.LoadImage, cluster.NodeExec, cluster.ClusterCA, cluster.Disposable,
		},
		Reasons: map[cluster.Capability]string{
			cluster.RegistryPull: "the cluster was made --without registry: kubeproof serves no registry beside it, and loads its images into the node",
		},
		Kubectl:      bin.Path("kubectl"),
		AuditLogPath: l.auditLog(),
		Etcd: &cluster.EtcdClient{
			Endpoints: c.etcdClientURLs(),
			Client:    cluster.KeyPairFiles{CertFile: l.pki("kubeproof-etcd-client.crt"), KeyFile: l.pki("kubeproof-etcd-client.key")},
			CAFile:    l.pki("etcd-ca.crt"),
			Etcdctl:   bin.Path("etcdctl"),
		},
		CA:                &cluster.KeyPairFiles{CertFile: l.pki("ca.crt"), KeyFile: l.pki("ca.key")},
		ContainerdAddress: l.containerdSock(),
		Ctr:               bin.Path("ctr"),
		// The node shares this machine's filesystem, not its network:
		// commands run here, in the node's network namespace, as the
		// node's components do (nsenter, not `ip netns exec`, which mounts
		// a sysfs of its own and so hides /sys/fs/cgroup).
		NodeExec:    &cluster.NodeExecSpec{Prefix: []string{"nsenter", "--net=" + l.netnsPath(), "--"}},
		CNITraceLog: l.cniTraceLog(),
		// The node keeps everything below the cluster's own directories.
		NodeLayout: &cluster.NodeLayout{CNIConfDir: l.cniConfDir(), CNIBinDir: l.cniBinDir(), KubeletRoot: l.kubeletRoot(),
			PodLogDir: l.podLogs(), StaticPodDir: l.staticPods(), ContainerdRoot: l.containerdRoot()},
		Endpoints: map[string]string{
			ControllerManager: "https://" + net.JoinHostPort(nw.hostIP.String(), strconv.Itoa(c.ControllerManagerPort)),
			Scheduler:         "https://" + net.JoinHostPort(nw.hostIP.String(), strconv.Itoa(c.SchedulerPort)),
		},
		Nodes: []string{l.nodeName()},
	}
}

// Status implements cluster.Provider.
func (p *Provider) Status(ctx context.Context) (cluster.Status, error) {
	st, err := loadState(p.l.stateFile())
	if err != nil {
		if isNotExist(err) {
			s := cluster.Status{}
			if p.leftovers() {
				s.Lines = append(s.Lines, cluster.StatusLine{Part: "cluster", State: "leftovers", Detail: "run `kubeproof down --name " + p.cfg.Name + "`"})
			} else {
				s.Lines = append(s.Lines, cluster.StatusLine{Part: "cluster", State: "absent"})
			}
			return s, nil
		}
		return cluster.Status{}, err
	}
	s := cluster.Status{Up: st.Ready}
	for _, r := range st.Processes {
		state := "running"
		if !r.Alive() {
			state, s.Up = "stopped", false
		}
		s.Lines = append(s.Lines, cluster.StatusLine{Part: r.Name, State: state, Detail: fmt.Sprintf("pid %d, log %s", r.PID, r.Log)})
	}
	if client, err := adminClient(p.l); err == nil {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		node, err := client.CoreV1().Nodes().Get(ctx, p.l.nodeName(), metav1.GetOptions{})
		switch {
		case err != nil:
			s.Lines = append(s.Lines, cluster.StatusLine{Part: "node " + p.l.nodeName(), State: "unknown", Detail: err.Error()})
		case nodeReady(node):
			s.Lines = append(s.Lines, cluster.StatusLine{Part: "node " + node.Name, State: "Ready", Detail: "podCIDR " + node.Spec.PodCIDR})
		default:
			s.Up = false
			s.Lines = append(s.Lines, cluster.StatusLine{Part: "node " + node.Name, State: "NotReady", Detail: describeNode(node)})
		}
	}
	return s, nil
}

// adminClient is a client with the cluster's admin credentials.
func adminClient(l layout) (kubernetes.Interface, error) {
	if _, err := os.Stat(l.adminKubeconfig()); err != nil {
		return nil, fmt.Errorf("admin kubeconfig: %w", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", l.adminKubeconfig())
	if err != nil {
		return nil, fmt.Errorf("load admin kubeconfig: %w", err)
	}
	cfg.Timeout = 10 * time.Second
	return kubernetes.NewForConfig(cfg)
}

// InfoFile implements cluster.InfoFiler.
func (p *Provider) InfoFile() string { return p.l.infoFile() }

// Clusters implements cluster.Lister: every local cluster with state on
// this machine, up, broken or left by a killed kubeproof.
func (p *Provider) Clusters() ([]string, error) { return otherClusters(""), nil }
