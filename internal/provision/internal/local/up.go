package local

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/internal/buildinfo"
	"github.com/kubeproof/kubeproof/internal/debpkg"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/noproxy"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision/internal/binaries"
	"github.com/kubeproof/kubeproof/internal/provision/internal/bringup"
	"github.com/kubeproof/kubeproof/internal/provision/internal/cni"
	"github.com/kubeproof/kubeproof/internal/provision/internal/hostchange"
	"github.com/kubeproof/kubeproof/internal/provision/internal/imagebuild"
	"github.com/kubeproof/kubeproof/internal/provision/internal/process"
	"github.com/kubeproof/kubeproof/internal/provision/internal/registryhosts"
)

// Timeouts for one component to become ready. They are generous because a
// cold page cache on a loaded 2-core machine is slow; a warm start takes a
// few seconds in all.
const (
	etcdTimeout      = 60 * time.Second
	apiServerTimeout = 90 * time.Second
	componentTimeout = 60 * time.Second
	nodeTimeout      = 90 * time.Second
)

// Up makes the cluster. Checks that need no change to the machine run
// first; then the host packages, binaries and images are made ready (they
// are cached and outlive the cluster); then every change is recorded in the
// state file before it is made and undone if Up fails or is interrupted.
func (p *Provider) Up(ctx context.Context) (*cluster.Info, error) {
	if err := p.preflight(); err != nil {
		return nil, err
	}
	c, pr := p.cfg, p.cfg.Progress
	// The components started below inherit the environment: a proxy it
	// names must not get the requests for this cluster's own ranges.
	noproxy.Exempt(c.LinkCIDR, c.PodCIDR, c.ServiceCIDR)
	if err := debpkg.Ensure(ctx, debpkg.LocalCluster, pr); err != nil {
		return nil, err
	}
	bin, err := binaries.Ensure(ctx, binaries.Options{
		KubernetesVersion: c.KubernetesVersion, EtcdVersion: c.EtcdVersion,
		CacheDir: c.CacheDir, Progress: pr,
	})
	if err != nil {
		return nil, err
	}
	tars, err := buildImages(c)
	if err != nil {
		return nil, err
	}

	// What existed before is noted before anything is made.
	st := &state{Name: c.Name, Config: c, CreatedAt: time.Now(), HostPaths: recordHostPaths(), Owner: process.Self("kubeproof"), Cgroup: p.cgroup}
	if err := os.MkdirAll(p.l.dataDir(), 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", p.l.dataDir(), err)
	}
	if err := st.save(p.l.stateFile()); err != nil {
		return nil, err
	}
	info, err := p.create(ctx, st, bin, tars)
	if err != nil {
		pr.Infof("cleaning up after the failed start of cluster %q", c.Name)
		cleanupCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if derr := p.Down(cleanupCtx); derr != nil {
			err = fmt.Errorf("%w; cleaning up also failed: %v", err, derr)
		}
		if exitcode.Of(err) == exitcode.Internal && ctx.Err() == nil {
			err = exitcode.With(exitcode.ClusterSetup, err)
		}
		return nil, err
	}
	return info, nil
}

// programDir is where the programs packed into images (and the CNI trace
// plugin) are.
func programDir(c Config) (string, error) {
	if c.ProgramDir != "" {
		return c.ProgramDir, nil
	}
	return imagebuild.ProgramDir()
}

// buildImages packs the images the node gets, and checks that the CNI
// trace plugin is there too, before anything on the machine changes.
func buildImages(c Config) (map[string]string, error) {
	programDir, err := programDir(c)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(programDir, cni.TracePlugin)); err != nil {
		return nil, exitcode.Errorf(exitcode.MissingTool, "the CNI trace plugin %s is missing (make build puts it beside kubeproof): %v", cni.TracePlugin, err)
	}
	tars := map[string]string{}
	for _, img := range images.All {
		if c.SkipImageLoad && images.IsWorkload(img) {
			continue
		}
		tar, err := imagebuild.Build(img, programDir, c.CacheDir)
		if err != nil {
			return nil, err
		}
		tars[img.Ref] = tar
	}
	return tars, nil
}

// preflight checks everything that can be checked without changing the
// machine, so that bad input leaves nothing behind.
func (p *Provider) preflight() error {
	c, l := p.cfg, p.l
	if os.Geteuid() != 0 {
		return exitcode.Errorf(exitcode.Permission, "the local provider needs root: it creates a network namespace, cgroups and mounts (run it with sudo)")
	}
	// How the node's cgroups are made follows the machine's: cgroup v1 or
	// v2, and systemd managing them or not.
	host, err := hostchange.ReadCgroupHost()
	if err != nil {
		return err
	}
	if p.cgroup, err = hostchange.PlanNodeCgroup(host, l.cgroupName()); err != nil {
		return exitcode.With(exitcode.MissingTool, err)
	}
	if _, err := os.Stat(l.stateFile()); err == nil {
		return exitcode.Errorf(exitcode.Conflict, "cluster %q already exists (see `kubeproof status --name %s`; remove it with `kubeproof down --name %s`)", c.Name, c.Name, c.Name)
	}
	if _, err := os.Stat(l.netnsPath()); err == nil {
		return exitcode.Errorf(exitcode.Conflict, "network namespace %s already exists: remove the leftover with `kubeproof down --name %s`", l.netns(), c.Name)
	}
	if _, err := net.InterfaceByName(l.hostVeth()); err == nil {
		return exitcode.Errorf(exitcode.Conflict, "network interface %s already exists (another cluster with a similar name?)", l.hostVeth())
	}
	for _, tool := range []string{"ip", "nsenter", "iptables"} {
		if _, err := exec.LookPath(tool); err != nil && len(debpkg.Missing(debpkg.LocalCluster)) == 0 {
			return exitcode.Errorf(exitcode.MissingTool, "%s not found in PATH", tool)
		}
	}
	if c.LinkCIDR == "" {
		routes, err := hostRoutes()
		if err != nil {
			return err
		}
		link, err := chooseLink(c, routes)
		if err != nil {
			return err
		}
		p.cfg.LinkCIDR, c.LinkCIDR = link, link
	}
	if err := checkRoutes(c); err != nil {
		return err
	}
	return checkPorts(c)
}

// bringUp is the recorded part of one Up: what its steps share. Each step
// is a method; the first are run as bringup steps, then the components
// start, each recorded when it is ready.
type bringUp struct {
	p     *Provider
	st    *state
	bin   binaries.Set
	tars  map[string]string
	steps *bringup.Steps
	// Set once the components start.
	s      *starter
	byName map[string]component
	admin  kubernetes.Interface
}

// create does the recorded part of Up.
func (p *Provider) create(ctx context.Context, st *state, bin binaries.Set, tars map[string]string) (*cluster.Info, error) {
	c, l, pr := p.cfg, p.l, p.cfg.Progress
	nw := c.network()
	begin := time.Now()

	u := &bringUp{p: p, st: st, bin: bin, tars: tars, steps: bringup.New(pr)}
	if err := u.steps.Run(ctx,
		bringup.Step{Name: "directories", Run: u.directories},
		bringup.Step{Name: "certificates and configuration", Run: u.certificatesAndConfiguration},
		bringup.Step{Name: fmt.Sprintf("node network namespace %s (node %s, host %s)", l.netns(), nw.nodeIP, nw.hostIP), Run: u.nodeNetwork},
		bringup.Step{Name: "node cgroup (" + p.cgroup.Describe() + "), pod network configuration, host sysctls", Run: u.nodeCgroupAndPodNetwork},
	); err != nil {
		return nil, err
	}

	pr.Infof("starting components (times from the start of the bring-up)")
	if err := u.startComponents(ctx); err != nil {
		return nil, err
	}
	return u.finish(begin)
}

// directories makes the cluster's directories; etcd refuses a data
// directory readable by others, so all are private.
func (u *bringUp) directories(context.Context) error {
	l := u.p.l
	for _, d := range []string{l.runDir(), l.logDir(), l.confDir(), l.kubeletRoot(), l.podLogs(), l.staticPods(), l.cniConfDir(), l.cniIPAMDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("create %s: %w", d, err)
		}
	}
	return nil
}

func (u *bringUp) certificatesAndConfiguration(context.Context) error {
	c, l := u.p.cfg, u.p.l
	if err := makePKI(c, l); err != nil {
		return err
	}
	return writeConfigFiles(c, l, u.bin, u.p.cgroup)
}

func (u *bringUp) nodeNetwork(ctx context.Context) error {
	c, l := u.p.cfg, u.p.l
	if err := hostModules.Hold(hostHolder(l.name)); err != nil {
		return err
	}
	return setupNetwork(ctx, c, l)
}

func (u *bringUp) nodeCgroupAndPodNetwork(ctx context.Context) error {
	c, l := u.p.cfg, u.p.l
	if err := u.p.cgroup.Make(ctx, savedControllers, hostHolder(l.name)); err != nil {
		return err
	}
	dir, err := programDir(c)
	if err != nil {
		return err
	}
	if err := makeCNIBinDir(l, dir); err != nil {
		return err
	}
	// The pod network is configured before the kubelet starts, so
	// that its first runtime check finds it (it checks every 5 s).
	// The node's pod CIDR is confirmed once the node object has one
	// (see startNode).
	if err := writeCNIConfig(c, l, c.network().nodePodCIDR.String()); err != nil {
		return err
	}
	return hostSysctls.Hold(hostHolder(l.name))
}

// finish marks the cluster ready in its state and writes its Info.
func (u *bringUp) finish(begin time.Time) (*cluster.Info, error) {
	c, l := u.p.cfg, u.p.l
	u.st.Ready = true
	if err := u.st.save(l.stateFile()); err != nil {
		return nil, err
	}
	info := u.p.info(u.bin)
	info.Components = u.steps.Status()
	info.NodeCgroups = u.p.cgroup.Describe()
	info.CreatedAt = begin
	if c.Runs(Registry) {
		info.ServesPulls(c.registry(l).PullRegistry())
	}
	info.PullsFrom(c.ImageRegistry, buildinfo.ImageTag(), !c.SkipImageLoad)
	info.NodeRegistry = registryhosts.NodeAddress(c.Shape, c.network().hostIP.String())
	if err := info.Save(l.infoFile()); err != nil {
		return nil, err
	}
	c.Progress.Infof("cluster %q is up %s after its bring-up began", c.Name, progress.Round(u.steps.Since()))
	return info, nil
}
