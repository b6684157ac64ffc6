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

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/provision/internal/binaries"
	"github.com/kubeproof/kubeproof/internal/provision/internal/controlplane"
	"github.com/kubeproof/kubeproof/internal/provision/internal/process"
)

var (
	_ cluster.ComponentRestarter    = (*Provider)(nil)
	_ cluster.ExtraComponentStarter = (*Provider)(nil)
)

// restartable are the processes RestartComponent restarts: every component
// but etcd, whose members StopComponent stops and starts as they were.
var restartable = []string{APIServer, ControllerManager, Scheduler, Kubelet, KubeProxy, Containerd}

// configured are the components whose feature gates and configuration are
// in a --config file (the kubelet's and kube-proxy's).
var configured = []string{Kubelet, KubeProxy}

// RestartComponent restarts a process of the cluster with change: its
// flags changed, its feature gates added, its configuration file patched
// into a copy (the original stays as it was). The returned function
// restarts it with the command line it had, and removes the copy. The node
// agents (kubelet, containerd) leave the containers running: containerd's
// shims hold them.
func (p *Provider) RestartComponent(ctx context.Context, name string, change cluster.ComponentChange) (func(context.Context) error, error) {
	if !slices.Contains(restartable, name) {
		return nil, fmt.Errorf("the local provider restarts %s, not %s", strings.Join(restartable, ", "), name)
	}
	if change.Node != "" && change.Node != p.l.nodeName() {
		return nil, fmt.Errorf("the local cluster's one node is %s, not %s", p.l.nodeName(), change.Node)
	}
	if name == Containerd && !controlplane.Unchanged(change) {
		return nil, fmt.Errorf("the local provider restarts containerd only as it is: its configuration is TOML, which a restart does not patch")
	}
	if len(change.Config) > 0 && !slices.Contains(configured, name) {
		return nil, fmt.Errorf("the local %s has no configuration file to patch: change its flags (args) instead", name)
	}
	st, err := loadState(p.l.stateFile())
	if err != nil {
		return nil, fmt.Errorf("restart %s: read the cluster's state: %w", name, err)
	}
	rec, ok := st.process(name)
	if !ok || !rec.Alive() {
		return nil, fmt.Errorf("restart %s: it is not running in local cluster %q", name, p.cfg.Name)
	}
	args := controlplane.ChangeArgs(rec.Args, change, slices.Contains(configured, name))
	patched := ""
	if slices.Contains(configured, name) && (len(change.Config) > 0 || len(change.FeatureGates) > 0) {
		if patched, err = patchedConfig(args, change); err != nil {
			return nil, fmt.Errorf("restart %s: %w", name, err)
		}
		args = controlplane.Override(args, []string{"--config=" + patched})
	}
	restore := func(ctx context.Context) error {
		cur, err := loadState(p.l.stateFile())
		if err != nil {
			return fmt.Errorf("restart %s as it was: read the cluster's state: %w", name, err)
		}
		now, _ := cur.process(name)
		if err := p.replaceProcess(ctx, now, rec.Args); err != nil {
			return fmt.Errorf("restart %s as it was: %w", name, err)
		}
		if patched != "" {
			_ = os.Remove(patched)
		}
		return nil
	}
	if err := p.replaceProcess(ctx, rec, args); err != nil {
		// A component that does not come up with the change is put back.
		if rerr := restore(ctx); rerr != nil {
			err = fmt.Errorf("%w (and %v)", err, rerr)
		}
		return nil, fmt.Errorf("restart %s with %s: %w", name, describeChange(change), err)
	}
	return restore, nil
}

// patchedConfig writes the --config file of args, patched, beside it.
func patchedConfig(args []string, change cluster.ComponentChange) (string, error) {
	path := controlplane.ConfigFlag(args)
	if path == "" {
		return "", fmt.Errorf("no --config flag to patch")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	out, err := controlplane.PatchConfig(data, change)
	if err != nil {
		return "", err
	}
	patched := strings.TrimSuffix(path, ".yaml") + ".kubeproof-restart.yaml"
	return patched, os.WriteFile(patched, out, 0o600)
}

// replaceProcess stops rec's process (if it runs), starts args in its
// place with its log and environment, records it in the state file and
// waits until it is healthy.
func (p *Provider) replaceProcess(ctx context.Context, rec process.Record, args []string) error {
	if rec.Alive() {
		if err := process.Terminate(rec.PID, 10*time.Second); err != nil {
			return fmt.Errorf("stop it: %w", err)
		}
	}
	proc, err := process.Start(rec.Name, args, rec.Log, rec.Env)
	if err != nil {
		return err
	}
	if err := p.recordRestart(rec.Name, proc.Record); err != nil {
		return err
	}
	st, err := loadState(p.l.stateFile())
	if err != nil {
		return err
	}
	check, err := p.restartCheck(rec.Name)
	if err != nil {
		return err
	}
	s := &starter{st: st, l: p.l, procs: map[string]*process.Proc{rec.Name: proc}}
	return s.waitReady(ctx, rec.Name, componentTimeout, check)
}

// restartCheck is how a restarted component is known to be healthy: the
// check `up` waits on, or, for the kubelet, its /healthz through the API
// server's node proxy (it serves it on the node's loopback only).
func (p *Provider) restartCheck(name string) (func(context.Context) (string, error), error) {
	c := p.cfg
	nw := c.network()
	switch name {
	case APIServer, Kubelet:
		admin, err := adminClient(p.l)
		if err != nil {
			return nil, err
		}
		if name == APIServer {
			return apiServerReady(admin), nil
		}
		return func(ctx context.Context) (string, error) {
			body, err := admin.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", p.l.nodeName(), "proxy/healthz").DoRaw(ctx)
			if err != nil {
				return "", fmt.Errorf("the kubelet's /healthz: %v", err)
			}
			return string(body), nil
		}, nil
	case Containerd:
		bin, err := binaries.Locate(binaries.Options{KubernetesVersion: c.KubernetesVersion, EtcdVersion: c.EtcdVersion, CacheDir: c.CacheDir})
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (string, error) { return ctr(ctx, bin, p.l, "version") }, nil
	case KubeProxy:
		return httpHealthy(fmt.Sprintf("http://%s:10256/healthz", nw.nodeIP)), nil
	case ControllerManager:
		return httpsHealthy(net.JoinHostPort(nw.hostIP.String(), strconv.Itoa(c.ControllerManagerPort))), nil
	default:
		return httpsHealthy(net.JoinHostPort(nw.hostIP.String(), strconv.Itoa(c.SchedulerPort))), nil
	}
}

// describeChange names a change for messages.
func describeChange(change cluster.ComponentChange) string {
	if controlplane.Unchanged(change) {
		return "no change"
	}
	var parts []string
	if len(change.Args) > 0 {
		parts = append(parts, "flags "+strings.Join(change.Args, " "))
	}
	if len(change.FeatureGates) > 0 {
		parts = append(parts, "feature gates "+controlplane.GatesFlag(change.FeatureGates))
	}
	if len(change.Config) > 0 {
		parts = append(parts, "a configuration patch")
	}
	return strings.Join(parts, ", ")
}

// StartExtraComponent starts a second kube-scheduler, whose one profile is
// name, on this machine with the cluster's admin credentials.
func (p *Provider) StartExtraComponent(ctx context.Context, component, name string, args []string) (func() error, error) {
	if component != Scheduler {
		return nil, fmt.Errorf("the local provider runs a second %s only, not %s", Scheduler, component)
	}
	c := p.cfg
	bin, err := binaries.Locate(binaries.Options{KubernetesVersion: c.KubernetesVersion, EtcdVersion: c.EtcdVersion, CacheDir: c.CacheDir})
	if err != nil {
		return nil, err
	}
	return controlplane.StartScheduler(ctx, controlplane.ExtraScheduler{
		Name: name, Binary: bin.Path(Scheduler), Kubeconfig: p.l.adminKubeconfig(), Dir: p.l.dataDir(),
		Host: c.network().hostIP.String(), Args: args, Log: p.l.log(Scheduler + "-" + name),
	})
}
