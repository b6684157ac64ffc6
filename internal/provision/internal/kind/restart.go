package kind

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/provision/internal/binaries"
	"github.com/kubeproof/kubeproof/internal/provision/internal/controlplane"
)

var (
	_ cluster.ComponentRestarter    = (*Provider)(nil)
	_ cluster.ExtraComponentStarter = (*Provider)(nil)
)

// restartTimeout bounds each wait of a restart: a static Pod's new process,
// a leader's lease (15 s before another may take it), a rollout.
const restartTimeout = 2 * time.Minute

// Containerd is the node's container runtime, a systemd unit.
const Containerd = "containerd"

// RestartComponent restarts a component the way an operator of a kubeadm
// node would: a control-plane component by changing its static Pod's
// manifest (the kubelet runs the new one), the kubelet and containerd with
// systemctl after changing the kubelet's flags file and configuration,
// kube-proxy by a rollout of its DaemonSet. What it changed is kept, and
// the returned function puts it back the same way.
func (p *Provider) RestartComponent(ctx context.Context, name string, change cluster.ComponentChange) (func(context.Context) error, error) {
	st, err := loadState(p.l)
	if err != nil {
		return nil, fmt.Errorf("kind cluster %q is not up: %w", p.cfg.Name, err)
	}
	kp, err := p.kind(st.DockerHost)
	if err != nil {
		return nil, err
	}
	all, cp, _, err := p.nodesOf(kp)
	if err != nil {
		return nil, err
	}
	client, err := adminClient(p.l.kubeconfig())
	if err != nil {
		return nil, err
	}
	switch name {
	case APIServer, ControllerManager, Scheduler:
		if change.Node != "" && change.Node != cp.String() {
			return nil, fmt.Errorf("%s runs on %s only, not %s", name, cp, change.Node)
		}
		if len(change.Config) > 0 {
			return nil, fmt.Errorf("kind's %s has no configuration file to patch: change its flags (args) instead", name)
		}
		return restartStatic(ctx, client, cp, name, change)
	case Kubelet, Containerd:
		var on []nodes.Node
		for _, n := range all {
			if change.Node == "" || n.String() == change.Node {
				on = append(on, n)
			}
		}
		if len(on) == 0 {
			return nil, fmt.Errorf("kind cluster %q has no node %s", p.cfg.Name, change.Node)
		}
		if name == Containerd {
			if !controlplane.Unchanged(change) {
				return nil, fmt.Errorf("the kind provider restarts containerd only as it is: its configuration is TOML, which a restart does not patch")
			}
			healthy := func(ctx context.Context, n nodes.Node) error { return n.CommandContext(ctx, "ctr", "version").Run() }
			if err := restartUnits(ctx, on, Containerd, nil, healthy); err != nil {
				return nil, err
			}
			// As it was is as it is: restarted once more, for a restore
			// that a probe can time like the restart.
			return func(ctx context.Context) error { return restartUnits(ctx, on, Containerd, nil, healthy) }, nil
		}
		return restartKubelets(ctx, client, on, change)
	case KubeProxy:
		if change.Node != "" {
			return nil, fmt.Errorf("kind's kube-proxy is a DaemonSet: it is restarted on every node, not on %s", change.Node)
		}
		return restartKubeProxy(ctx, client, change)
	}
	return nil, fmt.Errorf("the kind provider restarts %s, not %s", strings.Join(cluster.RestartableComponents, ", "), name)
}

// staticComm is the process name of a control-plane static Pod
// (/proc/PID/comm holds at most 15 bytes).
var staticComm = map[string]string{APIServer: "kube-apiserver", ControllerManager: "kube-controller", Scheduler: "kube-scheduler"}

// restartStatic changes the command of a control-plane static Pod and
// waits until the kubelet runs the new process and it is healthy.
func restartStatic(ctx context.Context, client kubernetes.Interface, cp nodes.Node, name string, change cluster.ComponentChange) (func(context.Context) error, error) {
	manifest := "/etc/kubernetes/manifests/" + name + ".yaml"
	var orig bytes.Buffer
	if err := cp.CommandContext(ctx, "cat", manifest).SetStdout(&orig).Run(); err != nil {
		return nil, fmt.Errorf("read %s on %s: %w", manifest, cp, err)
	}
	var pod corev1.Pod
	if err := yaml.Unmarshal(orig.Bytes(), &pod); err != nil {
		return nil, fmt.Errorf("parse %s: %w", manifest, err)
	}
	i := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == name })
	if i < 0 {
		return nil, fmt.Errorf("%s has no %s container", manifest, name)
	}
	pod.Spec.Containers[i].Command = controlplane.ChangeArgs(pod.Spec.Containers[i].Command, change, false)
	changed, err := yaml.Marshal(&pod)
	if err != nil {
		return nil, err
	}
	put := func(ctx context.Context, data []byte) error {
		before, err := pids(ctx, cp, staticComm[name])
		if err != nil {
			return err
		}
		lease, err := leaseHolder(ctx, client, name)
		if err != nil {
			return err
		}
		// Written beside the directory and moved in: the kubelet never
		// reads half a manifest.
		tmp := "/etc/kubernetes/" + name + ".yaml.kubeproof-new"
		if err := cp.CommandContext(ctx, "sh", "-c", `cat > "$1" && mv "$1" "$2"`, "sh", tmp, manifest).SetStdin(bytes.NewReader(data)).Run(); err != nil {
			return fmt.Errorf("write %s on %s: %w", manifest, cp, err)
		}
		if err := waitNewProcess(ctx, cp, staticComm[name], before); err != nil {
			return err
		}
		return waitStaticHealthy(ctx, client, name, lease)
	}
	if err := put(ctx, changed); err != nil {
		// As the local provider does: a change the component does not come
		// up with is taken back, so the cluster is left as it was (no
		// restore function is returned to do it later).
		if back := put(context.WithoutCancel(ctx), orig.Bytes()); back != nil {
			return nil, fmt.Errorf("restart %s: %w; and as it was: %v", name, err, back)
		}
		return nil, fmt.Errorf("restart %s (put back as it was): %w", name, err)
	}
	return func(ctx context.Context) error {
		if err := put(ctx, orig.Bytes()); err != nil {
			return fmt.Errorf("restart %s as it was: %w", name, err)
		}
		return nil
	}, nil
}

// pids are the PIDs of the processes named comm on node.
func pids(ctx context.Context, node nodes.Node, comm string) ([]string, error) {
	var out bytes.Buffer
	script := `for f in /proc/[0-9]*/comm; do if [ "$(cat "$f" 2>/dev/null)" = "$1" ]; then d=${f%/comm}; echo "${d#/proc/}"; fi; done`
	if err := node.CommandContext(ctx, "sh", "-c", script, "sh", comm).SetStdout(&out).Run(); err != nil {
		return nil, fmt.Errorf("list the %s processes on %s: %w", comm, node, err)
	}
	return strings.Fields(out.String()), nil
}

// waitNewProcess waits until a process named comm runs on node that is
// none of before, and none of before does.
func waitNewProcess(ctx context.Context, node nodes.Node, comm string, before []string) error {
	var last []string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, restartTimeout, true, func(ctx context.Context) (bool, error) {
		now, err := pids(ctx, node, comm)
		if err != nil {
			return false, err
		}
		last = now
		return len(now) > 0 && !slices.ContainsFunc(now, func(p string) bool { return slices.Contains(before, p) }), nil
	})
	if err != nil {
		return fmt.Errorf("waited %s for a new %s process on %s (before: %v; last seen: %v): %w", restartTimeout, comm, node, before, last, err)
	}
	return nil
}

// leaseHolder is the holder of a component's leader lease ("" for the API
// server, which holds none, or when there is none yet).
func leaseHolder(ctx context.Context, client kubernetes.Interface, name string) (string, error) {
	if name == APIServer {
		return "", nil
	}
	l, err := client.CoordinationV1().Leases(metav1.NamespaceSystem).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", nil //nolint:nilerr // no lease yet: any holder is new
	}
	if l.Spec.HolderIdentity == nil {
		return "", nil
	}
	return *l.Spec.HolderIdentity, nil
}

// waitStaticHealthy waits until a restarted control-plane component
// works: the API server answers /readyz; the controller manager and the
// scheduler (leader-elected on kind) hold their lease under a new identity,
// which a process takes only once it has started its work.
func waitStaticHealthy(ctx context.Context, client kubernetes.Interface, name, oldHolder string) error {
	last := ""
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, restartTimeout, true, func(ctx context.Context) (bool, error) {
		if name == APIServer {
			body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
			if err != nil {
				last = err.Error()
				return false, nil
			}
			last = string(body)
			return true, nil
		}
		holder, _ := leaseHolder(ctx, client, name)
		last = "lease held by " + holder
		return holder != "" && holder != oldHolder, nil
	})
	if err != nil {
		return fmt.Errorf("waited %s for %s to be healthy; last seen: %s: %w", restartTimeout, name, last, err)
	}
	return nil
}

// restartUnits restarts a systemd unit on each node, after change (if
// set) has changed its files there, and waits until healthy passes.
func restartUnits(ctx context.Context, on []nodes.Node, unit string, change func(nodes.Node) error, healthy func(context.Context, nodes.Node) error) error {
	for _, n := range on {
		if change != nil {
			if err := change(n); err != nil {
				return err
			}
		}
		if err := n.CommandContext(ctx, "systemctl", "restart", unit).Run(); err != nil {
			return fmt.Errorf("systemctl restart %s on %s: %w", unit, n, err)
		}
		if err := waitHealthy(ctx, n, unit, healthy); err != nil {
			return err
		}
	}
	return nil
}

func waitHealthy(ctx context.Context, n nodes.Node, what string, healthy func(context.Context, nodes.Node) error) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, restartTimeout, true, func(ctx context.Context) (bool, error) {
		last = healthy(ctx, n)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("waited %s for %s on %s to be healthy; last seen: %v: %w", restartTimeout, what, n, last, err)
	}
	return nil
}

// StartExtraComponent starts a second kube-scheduler, whose one profile is
// name, on this machine with the cluster's admin credentials.
func (p *Provider) StartExtraComponent(ctx context.Context, component, name string, args []string) (func() error, error) {
	if component != Scheduler {
		return nil, fmt.Errorf("the kind provider runs a second %s only, not %s", Scheduler, component)
	}
	_, cpIP, err := p.controlPlane()
	if err != nil {
		return nil, err
	}
	host, err := hostAddressFor(cpIP)
	if err != nil {
		return nil, err
	}
	c := p.cfg
	bin, err := binaries.Locate(binaries.Options{KubernetesVersion: c.KubernetesVersion, EtcdVersion: c.EtcdVersion, CacheDir: c.CacheDir})
	if err != nil {
		return nil, err
	}
	return controlplane.StartScheduler(ctx, controlplane.ExtraScheduler{
		Name: name, Binary: bin.Path(Scheduler), Kubeconfig: p.l.kubeconfig(), Dir: p.l.dir(),
		Host: host, Args: args, Log: p.l.logDir() + "/" + Scheduler + "-" + name + ".log",
	})
}
