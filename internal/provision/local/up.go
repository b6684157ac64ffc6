package local

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/framework/images"
	"github.com/kubeproof/kubeproof/framework/observe"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision/binaries"
	"github.com/kubeproof/kubeproof/internal/provision/bringup"
	"github.com/kubeproof/kubeproof/internal/provision/cni"
	"github.com/kubeproof/kubeproof/internal/provision/debpkg"
	"github.com/kubeproof/kubeproof/internal/provision/hostchange"
	"github.com/kubeproof/kubeproof/internal/provision/imagebuild"
	"github.com/kubeproof/kubeproof/internal/provision/process"
	"github.com/kubeproof/kubeproof/internal/provision/registryhosts"
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

// starter starts components, records them in the state file, and waits for
// them to become ready.
type starter struct {
	mu    sync.Mutex
	st    *state
	l     layout
	steps *bringup.Steps
	procs map[string]*process.Proc
}

func (s *starter) start(comp component) (*process.Proc, error) {
	proc, err := process.Start(comp.name, comp.args, s.l.log(comp.name), comp.env)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.procs[comp.name] = proc
	s.st.Processes = append(s.st.Processes, proc.Record)
	if err := s.st.save(s.l.stateFile()); err != nil {
		return nil, err
	}
	return proc, nil
}

// ready records that comp became ready and prints it.
func (s *starter) ready(name string, started time.Time) { s.readyAs(name, name, started) }

// readyAs records a step named name that process proc made ready (the
// kubelet's step is its node turning Ready).
func (s *starter) readyAs(name, proc string, started time.Time) {
	s.mu.Lock()
	cs := cluster.ComponentStatus{Name: name, Started: started, ReadyIn: time.Since(started), Log: s.l.log(proc), Process: proc}
	if p, ok := s.procs[proc]; ok {
		cs.PID = p.PID
	}
	s.mu.Unlock()
	s.steps.Record(cs)
}

// waitReady polls check until it passes, the process exits, or timeout. A
// component has no watch to offer, so its health endpoint is asked every
// 100 ms; the error says what was awaited and what was seen last.
func (s *starter) waitReady(ctx context.Context, name string, timeout time.Duration, check func(context.Context) (string, error)) error {
	s.mu.Lock()
	proc := s.procs[name]
	s.mu.Unlock()
	var lastSeen string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if proc != nil {
			select {
			case <-proc.Exited():
				return false, fmt.Errorf("%s exited during startup (%v); last log lines:\n%s", name, proc.Err(), process.Tail(proc.Log, 5))
			default:
			}
		}
		seen, err := check(ctx)
		if err != nil {
			lastSeen = err.Error()
			return false, nil
		}
		lastSeen = seen
		return true, nil
	})
	if err != nil && ctx.Err() == nil && wait.Interrupted(err) {
		msg := fmt.Sprintf("timed out after %s waiting for %s to become ready; last seen: %s", timeout, name, lastSeen)
		if proc != nil {
			msg += fmt.Sprintf("; log %s ends with:\n%s", proc.Log, process.Tail(proc.Log, 5))
		}
		return fmt.Errorf("%s", msg)
	}
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// create does the recorded part of Up.
func (p *Provider) create(ctx context.Context, st *state, bin binaries.Set, tars map[string]string) (*cluster.Info, error) {
	c, l, pr := p.cfg, p.l, p.cfg.Progress
	nw := c.network()
	begin := time.Now()

	steps := bringup.New(pr)
	if err := steps.Run(ctx,
		bringup.Step{Name: "directories", Run: func(context.Context) error { return makeDirs(l) }},
		bringup.Step{Name: "certificates and configuration", Run: func(context.Context) error {
			if err := makePKI(c, l); err != nil {
				return err
			}
			return writeConfigFiles(c, l, bin, p.cgroup)
		}},
		bringup.Step{Name: fmt.Sprintf("node network namespace %s (node %s, host %s)", l.netns(), nw.nodeIP, nw.hostIP), Run: func(ctx context.Context) error {
			if err := hostModules.Hold(hostHolder(l.name)); err != nil {
				return err
			}
			return setupNetwork(ctx, c, l)
		}},
		bringup.Step{Name: "node cgroup (" + p.cgroup.Describe() + "), pod network configuration, host sysctls", Run: func(ctx context.Context) error {
			if err := p.cgroup.Make(ctx, savedControllers, hostHolder(l.name)); err != nil {
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
		}},
	); err != nil {
		return nil, err
	}

	pr.Infof("starting components (times from the start of the bring-up)")
	s := &starter{st: st, l: l, steps: steps, procs: map[string]*process.Proc{}}
	byName := map[string]component{}
	for _, comp := range components(c, l, bin) {
		byName[comp.name] = comp
	}
	startAndWait := func(name string, timeout time.Duration, check func(context.Context) (string, error)) error {
		comp, ok := byName[name]
		if !ok {
			return nil // left out with --without
		}
		started := time.Now()
		if _, err := s.start(comp); err != nil {
			return err
		}
		if err := s.waitReady(ctx, name, timeout, check); err != nil {
			return err
		}
		s.ready(name, started)
		return nil
	}

	admin, err := adminClient(l)
	if err != nil {
		return nil, err
	}
	// containerd (and the image import) runs beside etcd and the API server.
	runtimeReady := make(chan error, 1)
	go func() {
		err := startAndWait(Containerd, componentTimeout, func(ctx context.Context) (string, error) { return ctr(ctx, bin, l, "version") })
		if err == nil {
			err = importImages(ctx, bin, l, tars)
		}
		runtimeReady <- err
	}()
	// etcd's members start together: none is healthy before a majority
	// of them runs.
	etcdStarted := time.Now()
	for _, m := range c.etcdMembers(l) {
		if _, err := s.start(byName[m.name]); err != nil {
			return nil, err
		}
	}
	// The API server (never left out) starts with them: it builds its
	// handlers (1.5 s of CPU here) while etcd comes up, and connects once
	// etcd answers.
	apiStarted := time.Now()
	if _, err := s.start(byName[APIServer]); err != nil {
		return nil, err
	}
	for _, m := range c.etcdMembers(l) {
		if err := s.waitReady(ctx, m.name, etcdTimeout, etcdHealthy(c, m)); err != nil {
			return nil, err
		}
		s.ready(m.name, etcdStarted)
	}
	if err := s.waitReady(ctx, APIServer, apiServerTimeout, apiServerReady(admin)); err != nil {
		return nil, err
	}
	s.ready(APIServer, apiStarted)
	g, gctx := errgroup.WithContext(ctx)
	nodeKnown := make(chan struct{})
	for _, cp := range []struct {
		name string
		port int
	}{{ControllerManager, c.ControllerManagerPort}, {Scheduler, c.SchedulerPort}} {
		g.Go(func() error {
			return startAndWait(cp.name, componentTimeout, httpsHealthy(net.JoinHostPort(nw.hostIP.String(), strconv.Itoa(cp.port))))
		})
	}
	g.Go(func() error {
		select {
		case err := <-runtimeReady:
			if err != nil {
				return err
			}
		case <-gctx.Done():
			return gctx.Err()
		}
		return p.startNode(gctx, s, byName, admin, nodeKnown)
	})
	g.Go(func() error {
		// kube-proxy reads its node's addresses when it starts and, if the
		// node is not there yet, looks again only a second later: it
		// starts once the kubelet has registered the node.
		select {
		case <-nodeKnown:
		case <-gctx.Done():
			return gctx.Err()
		}
		return startAndWait(KubeProxy, componentTimeout, httpHealthy(fmt.Sprintf("http://%s:10256/healthz", nw.nodeIP)))
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}

	st.Ready = true
	if err := st.save(l.stateFile()); err != nil {
		return nil, err
	}
	info := p.info(bin)
	info.Components = steps.Status()
	info.NodeCgroups = p.cgroup.Describe()
	info.CreatedAt = begin
	info.PullsFrom(c.ImageRegistry, !c.SkipImageLoad)
	info.NodeRegistry = registryhosts.NodeAddress(c.Shape, c.network().hostIP.String())
	if err := info.Save(l.infoFile()); err != nil {
		return nil, err
	}
	pr.Infof("cluster %q is up %s after its bring-up began", c.Name, progress.Round(steps.Since()))
	return info, nil
}

// makeDirs makes the cluster's directories; etcd refuses a data directory
// readable by others, so all are private.
func makeDirs(l layout) error {
	for _, d := range []string{l.runDir(), l.logDir(), l.confDir(), l.kubeletRoot(), l.podLogs(), l.cniConfDir(), l.cniIPAMDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("create %s: %w", d, err)
		}
	}
	return nil
}

// startNode starts the kubelet, closes registered once the node object
// exists, gives the node its pod network, and waits for the node to be Ready.
func (p *Provider) startNode(ctx context.Context, s *starter, byName map[string]component, admin kubernetes.Interface, registered chan<- struct{}) error {
	c, l := p.cfg, p.l
	started := time.Now()
	if _, err := s.start(byName[Kubelet]); err != nil {
		return err
	}
	s.mu.Lock()
	proc := s.procs[Kubelet]
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-proc.Exited():
			cancel()
		case <-ctx.Done():
		}
	}()
	exitErr := func(err error) error {
		select {
		case <-proc.Exited():
			return fmt.Errorf("kubelet exited during startup (%v); last log lines:\n%s", proc.Err(), process.Tail(proc.Log, 5))
		default:
			return err
		}
	}
	lw := cache.NewFilteredListWatchFromClient(admin.CoreV1().RESTClient(), "nodes", "", func(o *metav1.ListOptions) {
		o.FieldSelector = observe.NameSelector(l.nodeName())
	})
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		_, err := observe.Until(gctx, nodeTimeout, "node "+l.nodeName()+" to be Ready", lw, func(n *corev1.Node) (bool, error) {
			return nodeReady(n), nil
		}, describeNode)
		if err != nil {
			return exitErr(err)
		}
		s.readyAs("node "+l.nodeName()+" Ready", Kubelet, started)
		return nil
	})
	// The node gets its pod CIDR from us as soon as it registers: the
	// controller manager's node-ipam controller would give it the same
	// first /24 only once all its controllers are built, about 5 s after
	// the node is Ready, and takes a range a node already has as used.
	// Without a controller manager the node keeps none, as before.
	g.Go(func() error {
		node, err := observe.Until(gctx, nodeTimeout, "node "+l.nodeName()+" to register", lw, func(n *corev1.Node) (bool, error) {
			return true, nil
		}, describeNode)
		if err != nil {
			return exitErr(err)
		}
		close(registered)
		if !c.Runs(ControllerManager) {
			return nil
		}
		want := c.network().nodePodCIDR.String()
		if node.Spec.PodCIDR == "" {
			node, err = assignPodCIDR(gctx, admin, l.nodeName(), want)
			if err != nil {
				return err
			}
		}
		// Had the controller manager been first with another range,
		// the pod network follows it.
		if node.Spec.PodCIDR != want {
			if err := writeCNIConfig(c, l, node.Spec.PodCIDR); err != nil {
				return err
			}
		}
		s.ready("node pod CIDR "+node.Spec.PodCIDR, started)
		return nil
	})
	return g.Wait()
}

// assignPodCIDR sets the node's pod CIDR. The API server takes it only while
// the node has none; if the controller manager set one first, the node as it
// is now is returned.
func assignPodCIDR(ctx context.Context, admin kubernetes.Interface, node, cidr string) (*corev1.Node, error) {
	patch := fmt.Sprintf(`{"spec":{"podCIDR":%q,"podCIDRs":[%q]}}`, cidr, cidr)
	n, err := admin.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err == nil {
		return n, nil
	}
	n, getErr := admin.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if getErr != nil || n.Spec.PodCIDR == "" {
		return nil, fmt.Errorf("assign pod CIDR %s to node %s: %w", cidr, node, err)
	}
	return n, nil
}

func nodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

func describeNode(n *corev1.Node) string {
	var parts []string
	parts = append(parts, "podCIDR="+n.Spec.PodCIDR)
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			parts = append(parts, fmt.Sprintf("Ready=%s (%s: %s)", cond.Status, cond.Reason, cond.Message))
		}
	}
	return fmt.Sprintf("node %s %s", n.Name, strings.Join(parts, " "))
}

// ctr runs containerd's CLI (of the cluster's containerd release) against
// the cluster's containerd.
func ctr(ctx context.Context, bin binaries.Set, l layout, args ...string) (string, error) {
	full := append([]string{"--address", l.containerdSock(), "--namespace", "k8s.io"}, args...)
	out, err := exec.CommandContext(ctx, bin.Path("ctr"), full...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

func importImages(ctx context.Context, bin binaries.Set, l layout, tars map[string]string) error {
	for ref, tar := range tars {
		if _, err := ctr(ctx, bin, l, "images", "import", tar); err != nil {
			return fmt.Errorf("load image %s: %w", ref, err)
		}
	}
	return nil
}

func etcdHealthy(c Config, m etcdMember) func(context.Context) (string, error) {
	url := fmt.Sprintf("http://%s/health", net.JoinHostPort(c.network().hostIP.String(), strconv.Itoa(m.metrics)))
	return func(ctx context.Context) (string, error) {
		body, err := httpGet(ctx, http.DefaultClient, url)
		if err != nil {
			return "", err
		}
		var h struct{ Health string }
		if json.Unmarshal([]byte(body), &h) != nil || h.Health != "true" {
			return "", fmt.Errorf("etcd /health: %s", body)
		}
		return body, nil
	}
}

func apiServerReady(admin kubernetes.Interface) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		body, err := admin.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return "", fmt.Errorf("/readyz: %v %s", err, truncate(string(body), 300))
		}
		return string(body), nil
	}
}

// insecureClient checks the health endpoints of the controller manager and
// scheduler, whose serving certificates are self-signed in memory; the
// endpoint's content, not its certificate, is what is checked.
var insecureClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

func httpsHealthy(hostPort string) func(context.Context) (string, error) {
	url := "https://" + hostPort + "/healthz"
	return func(ctx context.Context) (string, error) { return httpGet(ctx, insecureClient, url) }
}

func httpHealthy(url string) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) { return httpGet(ctx, http.DefaultClient, url) }
}

func httpGet(ctx context.Context, client *http.Client, url string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: HTTP %d: %s", url, resp.StatusCode, truncate(string(body), 200))
	}
	return strings.TrimSpace(string(body)), nil
}
