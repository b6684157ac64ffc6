package kind

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"slices"
	"time"

	"k8s.io/client-go/kubernetes"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/internal/buildinfo"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/pki"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision/internal/binaries"
	"github.com/kubeproof/kubeproof/internal/provision/internal/bringup"
	"github.com/kubeproof/kubeproof/internal/provision/internal/clusterregistry"
	"github.com/kubeproof/kubeproof/internal/provision/internal/config"
	"github.com/kubeproof/kubeproof/internal/provision/internal/dockerd"
	"github.com/kubeproof/kubeproof/internal/provision/internal/imagebuild"
	"github.com/kubeproof/kubeproof/internal/provision/internal/nodeimage"
	"github.com/kubeproof/kubeproof/internal/provision/internal/process"
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
	// Registry is the registry's process beside the cluster, if it runs.
	Registry *process.Record `json:"registry,omitempty"`
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
// our images in every node, the pod network, and all nodes Ready, each a
// named, timed step. On failure it removes what it made.
func (p *Provider) Up(ctx context.Context) (info *cluster.Info, err error) {
	c, l, pr := p.cfg, p.l, p.cfg.Progress
	if os.Geteuid() != 0 {
		return nil, exitcode.Errorf(exitcode.Permission, "the kind provider needs root (Docker, and the cluster's files in %s)", Root)
	}
	if _, err := loadState(l); err == nil {
		return nil, exitcode.Errorf(exitcode.Conflict, "kind cluster %q already exists (see `kubeproof status --provider kind --name %s`; remove it with `kubeproof down --provider kind --name %s`)", c.Name, c.Name, c.Name)
	}
	u := &bringUp{p: p, st: state{Config: c, Owner: process.Self("kubeproof")}, steps: bringup.New(pr)}
	// What is needed before the machine changes: Docker, the images.
	prepare := []bringup.Step{
		{Name: "Docker", Run: u.docker},
		{Name: "Kubernetes " + c.KubernetesVersion + " binaries", Run: u.binaries},
		{Name: "node image", Run: u.nodeImage},
		{Name: "kubeproof's images", Run: u.buildImages},
	}
	if c.NodeImage != "" {
		// A node image not ours is read first (see foreignImage).
		prepare[1], prepare[2] = prepare[2], prepare[1]
	}
	if err := u.steps.Run(ctx, prepare...); err != nil {
		// Nothing of the cluster exists yet; a private daemon started for
		// it (a bad --node-image fails here) is stopped again.
		if u.st.PrivateDocker && len(otherClusters(c.Name)) == 0 {
			if stopErr := dockerd.Stop(context.WithoutCancel(ctx), pr); stopErr != nil {
				pr.Infof("stopping the private Docker daemon again: %v", stopErr)
			}
			restoreDockerHost()
		}
		return nil, err
	}
	// From here on the machine changes: record it first, undo on failure.
	if err := saveState(l, u.st); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			pr.Infof("bringing kind cluster %q up failed; removing what was made", c.Name)
			_ = p.Down(context.WithoutCancel(ctx))
		}
	}()
	if err := u.steps.Run(ctx,
		bringup.Step{Name: "audit policy, PKI and log directories", Run: u.hostFiles},
		bringup.Step{Name: fmt.Sprintf("kind create (1 control plane, %d workers)", c.Workers), Run: u.create},
		bringup.Step{Name: "kubeproof's images on every node", Run: u.loadImages},
		bringup.Step{Name: "registry access", Run: u.registryAccess},
		bringup.Step{Name: "components left out", Run: u.leaveOut},
		bringup.Step{Name: "pod network", Run: u.podNetwork},
		bringup.Step{Name: "nodes Ready", Run: u.nodesReady},
	); err != nil {
		return nil, err
	}
	info = p.info(u)
	if u.registry != nil {
		info.ServesPulls(u.registry.PullRegistry())
	}
	info.PullsFrom(c.ImageRegistry, buildinfo.ImageTag(), !c.SkipImageLoad)
	info.NodeRegistry = u.nodeRegistry
	if err := info.Save(l.infoFile()); err != nil {
		return nil, err
	}
	u.st.Ready = true
	if err := saveState(l, u.st); err != nil {
		return nil, err
	}
	pr.Infof("kind cluster %q is up: %d nodes Ready (%s in all)", c.Name, len(u.nodes), progress.Round(u.steps.Since()))
	return info, nil
}

// bringUp is one bring-up of a kind cluster: what its steps found and made.
type bringUp struct {
	p     *Provider
	st    state
	steps *bringup.Steps
	kp    *kindcluster.Provider
	bin   binaries.Set
	// foreign is what a node image not ours (--node-image) gets.
	foreign *foreign
	// archives and programs are kubeproof's images and the programs for
	// its CNI bin directory (name -> path here) for such a node image.
	archives []string
	programs map[string]string
	nodes    []nodes.Node
	cp       nodes.Node
	cpIP     string
	client   kubernetes.Interface
	// nodeRegistry: where the nodes reach a loopback registry.
	nodeRegistry string
	// registry is the cluster's own registry, once it answers.
	registry *clusterregistry.Spec
}

// docker finds the Docker API to use, starting kubeproof's private daemon
// when the machine has none, and checks no kind cluster has the name.
func (u *bringUp) docker(ctx context.Context) error {
	c, pr := u.p.cfg, u.p.cfg.Progress
	host, err := dockerd.Select(ctx)
	if err != nil {
		return err
	}
	if host == "" {
		pr.Infof("no Docker API ($DOCKER_HOST unset, nothing at %s): starting kubeproof's private Docker daemon", dockerd.DefaultSocket)
		if err := dockerd.Start(ctx, c.CacheDir, pr); err != nil {
			return err
		}
		host, u.st.PrivateDocker = dockerd.Host(), true
	}
	u.st.DockerHost = host
	if u.kp, err = u.p.kind(host); err != nil {
		return err
	}
	if existing, _ := u.kp.List(); slices.Contains(existing, c.Name) {
		return exitcode.Errorf(exitcode.Conflict, "a kind cluster named %q already exists in Docker at %s (not made by kubeproof, or its state is gone): delete it with `kubeproof down --provider kind --name %s`", c.Name, host, c.Name)
	}
	return nil
}

func (u *bringUp) binaries(ctx context.Context) (err error) {
	c := u.p.cfg
	u.bin, err = binaries.Ensure(ctx, binaries.Options{KubernetesVersion: c.KubernetesVersion, EtcdVersion: c.EtcdVersion, CacheDir: c.CacheDir, Progress: c.Progress})
	return err
}

// nodeImage finds (or builds) kubeproof's node image, or, for one given
// with --node-image, pulls it if Docker lacks it and reads what it holds;
// either way it says in one line which node image the cluster runs.
func (u *bringUp) nodeImage(ctx context.Context) error {
	c := u.p.cfg
	if c.NodeImage != "" {
		u.st.NodeImage = c.NodeImage
		if err := u.foreignImage(ctx); err != nil {
			return err
		}
		c.Progress.Infof("%s", u.foreign.String(len(loadedImages(c.SkipImageLoad))))
		return nil
	}
	res, err := nodeimage.Ensure(ctx, nodeimage.Options{
		KubernetesVersion: c.KubernetesVersion, EtcdVersion: c.EtcdVersion, CacheDir: c.CacheDir, DockerHost: u.st.DockerHost,
		DebianMirror: c.DebianMirror, Progress: c.Progress,
	})
	if err != nil {
		return err
	}
	u.st.NodeImage = res.Ref
	c.Progress.Infof("%s", res)
	return nil
}

// buildImages builds kubeproof's images (and the pod network's) and finds
// the programs for a node image not ours; ours has them already (see
// package nodeimage).
func (u *bringUp) buildImages(ctx context.Context) error {
	if u.foreign == nil {
		return nil
	}
	programs, err := imagebuild.ProgramDir()
	if err != nil {
		return err
	}
	for _, img := range loadedImages(u.p.cfg.SkipImageLoad) {
		path, err := imagebuild.Build(img, programs, u.p.cfg.CacheDir)
		if err != nil {
			return err
		}
		u.archives = append(u.archives, path)
	}
	u.programs, err = u.foreignPrograms(ctx)
	return err
}

// hostFiles makes the directories the nodes mount, the audit policy, and
// takes the host sysctls the nodes need.
func (u *bringUp) hostFiles(context.Context) error {
	l := u.p.l
	for _, d := range []string{l.auditDir(), l.confDir(), l.pkiDir(), l.logDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", d, err)
		}
	}
	if err := pki.WriteFile(l.confDir()+"/audit-policy.yaml", []byte(config.AuditPolicy), 0o644); err != nil {
		return err
	}
	return hostSysctls.Hold(l.sysctlHolder())
}

// create runs `kind create` with kubeproof's configuration.
func (u *bringUp) create(context.Context) error {
	c, l := u.p.cfg, u.p.l
	setup := nodeSetup{ImageRepository: nodeimage.Repository}
	if u.foreign != nil {
		setup = nodeSetup{ImageRepository: u.foreign.ImageRepository}
		if u.foreign.ContainerdPatch != "" {
			setup.ContainerdPatches = []string{u.foreign.ContainerdPatch}
		}
	}
	cfg, err := kindConfig(c, l, u.st.NodeImage, setup)
	if err != nil {
		return exitcode.With(exitcode.Usage, err)
	}
	err = u.kp.Create(c.Name,
		kindcluster.CreateWithV1Alpha4Config(cfg),
		kindcluster.CreateWithKubeconfigPath(l.kubeconfig()),
		kindcluster.CreateWithWaitForReady(0),
		kindcluster.CreateWithDisplayUsage(false),
		kindcluster.CreateWithDisplaySalutation(false))
	if err != nil {
		return exitcode.With(exitcode.ClusterSetup, fmt.Errorf("kind create cluster %s: %w", c.Name, err))
	}
	if u.nodes, u.cp, u.cpIP, err = u.p.nodesOf(u.kp); err != nil {
		return err
	}
	u.client, err = adminClient(l.kubeconfig())
	return err
}

// loadImages puts our images, the CNI trace plugin and the CNI plugins it
// lacks into every node of a node image not ours; ours has them (see
// package nodeimage). Either way, when the nodes are to pull the workload
// images from a registry, the copies the node image holds are removed.
func (u *bringUp) loadImages(context.Context) error {
	c := u.p.cfg
	if u.foreign == nil {
		if !c.SkipImageLoad {
			return nil
		}
		return removeImages(u.nodes, images.Workloads, c.Progress)
	}
	if c.SkipImageLoad {
		if held := u.foreign.heldWorkloads(); len(held) > 0 {
			if err := removeImages(u.nodes, held, c.Progress); err != nil {
				return err
			}
		}
	}
	if err := loadImages(u.nodes, u.archives, c.Progress); err != nil {
		return err
	}
	return copyPrograms(u.nodes, u.programs)
}

// leaveOut removes the static Pods of the control-plane components the
// cluster is made without.
func (u *bringUp) leaveOut(context.Context) error {
	for _, w := range u.p.cfg.Without {
		if w == ControllerManager || w == Scheduler {
			if err := u.cp.Command("rm", "-f", "/etc/kubernetes/manifests/"+w+".yaml").Run(); err != nil {
				return fmt.Errorf("leave out %s: %w", w, err)
			}
		}
	}
	return nil
}

func (u *bringUp) podNetwork(ctx context.Context) error {
	if err := installNetwork(ctx, u.client, u.cpIP); err != nil {
		return exitcode.With(exitcode.ClusterSetup, err)
	}
	return nil
}

func (u *bringUp) nodesReady(ctx context.Context) error {
	if err := waitNodesReady(ctx, u.client, len(u.nodes), waitTimeout); err != nil {
		return exitcode.With(exitcode.ClusterSetup, err)
	}
	return nil
}

// info describes the cluster a bring-up made.
func (p *Provider) info(u *bringUp) *cluster.Info {
	c, l := p.cfg, p.l
	info := &cluster.Info{
		Provider:          ProviderName,
		Name:              c.Name,
		Kubeconfig:        l.kubeconfig(),
		Context:           "kind-" + c.Name,
		KubernetesVersion: c.KubernetesVersion,
		Capabilities: []cluster.Capability{cluster.AuditLog, cluster.EtcdAccess, cluster.ControlPlaneFlags,
			cluster.LoadImage, cluster.NodeExec, cluster.ClusterCA, cluster.Disposable},
		Reasons: map[cluster.Capability]string{
			cluster.RegistryPull: "the cluster was made --without registry: kubeproof serves no registry beside it, and loads its images into the nodes",
		},
		Kubectl:      u.bin.Path("kubectl"),
		AuditLogPath: l.auditLog(),
		Etcd: &cluster.EtcdClient{
			Endpoints: []string{"https://" + u.cpIP + ":2379"},
			Client:    cluster.KeyPairFiles{CertFile: l.pki("apiserver-etcd-client.crt"), KeyFile: l.pki("apiserver-etcd-client.key")},
			CAFile:    l.pki("etcd/ca.crt"),
			Etcdctl:   u.bin.Path("etcdctl"),
		},
		CA:          &cluster.KeyPairFiles{CertFile: l.pki("ca.crt"), KeyFile: l.pki("ca.key")},
		CNITraceLog: cniTraceLog,
		// kind's nodes are kubeadm's: everything where Kubernetes' docs say.
		NodeLayout: new(cluster.StandardNodeLayout),
		// The scheduler serves on the node's addresses (schedulerArgs).
		Endpoints:         map[string]string{Scheduler: "https://" + net.JoinHostPort(u.cpIP, "10259")},
		ContainerdAddress: "/run/containerd/containerd.sock",
		NodeExec: &cluster.NodeExecSpec{
			Prefix: []string{"docker", "exec", cluster.NodePlaceholder},
			Env:    []string{"DOCKER_HOST=" + u.st.DockerHost},
		},
		Components: u.steps.Status(),
		CreatedAt:  time.Now(),
	}
	for _, n := range u.nodes {
		info.Nodes = append(info.Nodes, n.String())
	}
	slices.Sort(info.Nodes)
	return info
}
