package kind

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"

	"github.com/kubeproof/kubeproof/framework/binaries"
	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/framework/dockerd"
	"github.com/kubeproof/kubeproof/framework/exitcode"
	"github.com/kubeproof/kubeproof/framework/images"
	"github.com/kubeproof/kubeproof/framework/nodeimage"
	"github.com/kubeproof/kubeproof/framework/pki"
	"github.com/kubeproof/kubeproof/framework/process"
	"github.com/kubeproof/kubeproof/framework/progress"
)

// state is what Up recorded for the other commands.
type state struct {
	Config     Config `json:"config"`
	DockerHost string `json:"dockerHost"`
	// PrivateDocker: Up started kubeproof's private Docker daemon, and the
	// last cluster's Down stops it.
	PrivateDocker bool   `json:"privateDocker"`
	NodeImage     string `json:"nodeImage"`
	// Owner is the kubeproof process that made the cluster; Ready is set
	// once Up finished.
	Owner process.Record `json:"owner"`
	Ready bool           `json:"ready"`
}

func saveState(l layout, st state) error {
	st.Config.Progress = nil
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encode kind state: %w", err)
	}
	return pki.WriteFile(l.stateFile(), append(data, '\n'), 0o600)
}

func loadState(l layout) (state, error) {
	var st state
	data, err := os.ReadFile(l.stateFile())
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("parse %s: %w", l.stateFile(), err)
	}
	return st, nil
}

// Up makes the cluster: Docker (kubeproof's private daemon if the machine
// has none), the node image, `kind create` with kubeproof's configuration,
// our images in every node, the pod network, and all nodes Ready. On
// failure it removes what it made.
func (p *Provider) Up(ctx context.Context) (info *cluster.Info, err error) {
	c, l, pr := p.cfg, p.l, p.cfg.Progress
	if os.Geteuid() != 0 {
		return nil, exitcode.Errorf(exitcode.Permission, "the kind provider needs root (Docker, and the cluster's files in %s)", Root)
	}
	if _, err := loadState(l); err == nil {
		return nil, exitcode.Errorf(exitcode.Conflict, "kind cluster %q already exists (see `kubeproof status --provider kind --name %s`; remove it with `kubeproof down --provider kind --name %s`)", c.Name, c.Name, c.Name)
	}
	begin := time.Now()
	st := state{Config: c, Owner: process.Self("kubeproof")}
	st.DockerHost, err = dockerd.Select(ctx)
	if err != nil {
		return nil, err
	}
	if st.DockerHost == "" {
		pr.Infof("no Docker API ($DOCKER_HOST unset, nothing at %s): starting kubeproof's private Docker daemon", dockerd.DefaultSocket)
		if err := dockerd.Start(ctx, c.CacheDir, pr); err != nil {
			return nil, err
		}
		st.DockerHost, st.PrivateDocker = dockerd.Host(), true
	}
	kp, err := p.kind(st.DockerHost)
	if err != nil {
		return nil, err
	}
	if existing, _ := kp.List(); slices.Contains(existing, c.Name) {
		return nil, exitcode.Errorf(exitcode.Conflict, "a kind cluster named %q already exists in Docker at %s (not made by kubeproof, or its state is gone): delete it with `kubeproof down --provider kind --name %s`", c.Name, st.DockerHost, c.Name)
	}
	bin, err := binaries.Ensure(ctx, binaries.Options{KubernetesVersion: c.KubernetesVersion, EtcdVersion: c.EtcdVersion, CacheDir: c.CacheDir, Progress: pr})
	if err != nil {
		return nil, err
	}
	st.NodeImage = c.NodeImage
	if st.NodeImage == "" {
		if st.NodeImage, err = nodeimage.Ensure(ctx, nodeimage.Options{
			KubernetesVersion: c.KubernetesVersion, EtcdVersion: c.EtcdVersion, CacheDir: c.CacheDir, DockerHost: st.DockerHost, Progress: pr,
		}); err != nil {
			return nil, err
		}
	}
	programs, err := images.ProgramDir()
	if err != nil {
		return nil, err
	}
	var archives []string
	for _, img := range append(slices.Clone(images.All), images.CNI) {
		path, err := images.Build(img, programs, c.CacheDir)
		if err != nil {
			return nil, err
		}
		archives = append(archives, path)
	}

	// From here on the machine changes: record it first, undo on failure.
	if err := saveState(l, st); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			pr.Infof("bringing kind cluster %q up failed; removing what was made", c.Name)
			_ = p.Down(context.WithoutCancel(ctx))
		}
	}()
	for _, d := range []string{l.auditDir(), l.confDir(), l.pkiDir(), l.logDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", d, err)
		}
	}
	if err := pki.WriteFile(l.confDir()+"/audit-policy.yaml", []byte(cluster.AuditPolicy), 0o644); err != nil {
		return nil, err
	}
	if err := hostSysctls.Hold(l.sysctlHolder()); err != nil {
		return nil, err
	}
	cfg, err := kindConfig(c, l, st.NodeImage)
	if err != nil {
		return nil, exitcode.With(exitcode.Usage, err)
	}

	var components []cluster.ComponentStatus
	mark := func(name string, started time.Time) {
		components = append(components, cluster.ComponentStatus{Name: name, Started: started, ReadyIn: time.Since(started)})
	}
	created := time.Now()
	done := pr.Step("creating kind cluster %q (1 control plane, %d workers) from %s", c.Name, c.Workers, st.NodeImage)
	err = kp.Create(c.Name,
		kindcluster.CreateWithV1Alpha4Config(cfg),
		kindcluster.CreateWithKubeconfigPath(l.kubeconfig()),
		kindcluster.CreateWithWaitForReady(0),
		kindcluster.CreateWithDisplayUsage(false),
		kindcluster.CreateWithDisplaySalutation(false))
	done(err)
	if err != nil {
		return nil, exitcode.With(exitcode.ClusterSetup, fmt.Errorf("kind create cluster %s: %w", c.Name, err))
	}
	mark("kind create", created)
	ns, cp, cpIP, err := p.nodesOf(kp)
	if err != nil {
		return nil, err
	}
	loaded := time.Now()
	if err := loadImages(ns, archives, pr); err != nil {
		return nil, err
	}
	mark("images loaded", loaded)
	for _, w := range c.Without {
		if w == ControllerManager || w == Scheduler {
			if err := cp.Command("rm", "-f", "/etc/kubernetes/manifests/"+w+".yaml").Run(); err != nil {
				return nil, fmt.Errorf("leave out %s: %w", w, err)
			}
		}
	}
	client, err := adminClient(l.kubeconfig())
	if err != nil {
		return nil, err
	}
	network := time.Now()
	if err := installNetwork(ctx, client, cpIP); err != nil {
		return nil, exitcode.With(exitcode.ClusterSetup, err)
	}
	ready := time.Now()
	done = pr.Step("waiting for %d nodes to be Ready", len(ns))
	err = waitNodesReady(ctx, client, len(ns), waitTimeout)
	done(err)
	if err != nil {
		return nil, exitcode.With(exitcode.ClusterSetup, err)
	}
	mark("pod network", network)
	mark("nodes Ready", ready)

	info = &cluster.Info{
		Provider:          ProviderName,
		Name:              c.Name,
		Kubeconfig:        l.kubeconfig(),
		Context:           "kind-" + c.Name,
		KubernetesVersion: c.KubernetesVersion,
		Capabilities: []cluster.Capability{cluster.AuditLog, cluster.EtcdAccess, cluster.ControlPlaneFlags,
			cluster.LoadImage, cluster.NodeExec, cluster.ClusterCA},
		Reasons: map[cluster.Capability]string{
			cluster.RegistryPull: "no container registry is reachable here: kubeproof loads its images into the nodes, nothing is pulled",
		},
		Kubectl:      bin.Path("kubectl"),
		AuditLogPath: l.auditLog(),
		Etcd: &cluster.EtcdClient{
			Endpoints: []string{"https://" + cpIP + ":2379"},
			Client:    cluster.KeyPairFiles{CertFile: l.pki("apiserver-etcd-client.crt"), KeyFile: l.pki("apiserver-etcd-client.key")},
			CAFile:    l.pki("etcd/ca.crt"),
			Etcdctl:   bin.Path("etcdctl"),
		},
		CA:                &cluster.KeyPairFiles{CertFile: l.pki("ca.crt"), KeyFile: l.pki("ca.key")},
		ContainerdAddress: "/run/containerd/containerd.sock",
		NodeExec: &cluster.NodeExecSpec{
			Prefix: []string{"docker", "exec", cluster.NodePlaceholder},
			Env:    []string{"DOCKER_HOST=" + st.DockerHost},
		},
		Components: components,
		CreatedAt:  time.Now(),
	}
	for _, n := range ns {
		info.Nodes = append(info.Nodes, n.String())
	}
	slices.Sort(info.Nodes)
	if err := info.Save(l.infoFile()); err != nil {
		return nil, err
	}
	st.Ready = true
	if err := saveState(l, st); err != nil {
		return nil, err
	}
	pr.Infof("kind cluster %q is up: %d nodes Ready %s after `kind create` started (%s in all)",
		c.Name, len(ns), time.Since(created).Round(time.Millisecond), time.Since(begin).Round(time.Millisecond))
	return info, nil
}

// loadImages loads the image archives into every node.
func loadImages(ns []nodes.Node, archives []string, pr *progress.Printer) (err error) {
	done := pr.Step("loading %d images into %d nodes", len(archives), len(ns))
	defer func() { done(err) }()
	for _, n := range ns {
		for _, a := range archives {
			f, err := os.Open(a)
			if err != nil {
				return fmt.Errorf("open image %s: %w", a, err)
			}
			err = nodeutils.LoadImageArchive(n, f)
			f.Close()
			if err != nil {
				return fmt.Errorf("load %s into node %s: %w", a, n, err)
			}
		}
	}
	return nil
}
