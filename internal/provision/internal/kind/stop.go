package kind

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/kubeproof/kubeproof/contract/cluster"
)

var _ cluster.ComponentStopper = (*Provider)(nil)

// The static Pods StopComponent stops, and the name the kernel gives their
// process (/proc/PID/comm holds at most 15 bytes).
var stoppable = map[string]string{
	"etcd":            "etcd",
	ControllerManager: "kube-controller",
	Scheduler:         "kube-scheduler",
}

// StopComponent stops a control-plane static Pod the way an operator does:
// its manifest leaves /etc/kubernetes/manifests, and the kubelet stops it.
// The returned function puts the manifest back and waits until the
// kubelet runs the component's process again; what the component does
// then is for the caller to observe. etcd is stopped in place instead
// (SIGSTOP, then SIGCONT): once, in CI, the kubelet did not start its
// static Pod again within a minute of the manifest's return, while the
// API server, which its mirror Pod goes through, had no etcd to answer.
func (p *Provider) StopComponent(ctx context.Context, name string) (func(context.Context) error, error) {
	if name == "etcd" {
		return p.freeze(ctx, stoppable[name])
	}
	comm, ok := stoppable[name]
	if !ok {
		names := make([]string, 0, len(stoppable))
		for n := range stoppable {
			names = append(names, n)
		}
		slices.Sort(names)
		return nil, fmt.Errorf("the kind provider stops only %s, not %s", strings.Join(names, ", "), name)
	}
	cp, _, err := p.controlPlane()
	if err != nil {
		return nil, err
	}
	manifest := "/etc/kubernetes/manifests/" + name + ".yaml"
	parked := "/etc/kubernetes/" + name + ".yaml.kubeproof-stopped"
	if err := cp.Command("mv", manifest, parked).Run(); err != nil {
		return nil, fmt.Errorf("stop %s: move its manifest out of %s: %w", name, cp, err)
	}
	if err := waitProcess(ctx, cp, comm, false); err != nil {
		return nil, fmt.Errorf("stop %s: %w", name, err)
	}
	return func(ctx context.Context) error {
		if err := cp.Command("mv", parked, manifest).Run(); err != nil {
			return fmt.Errorf("start %s again: put its manifest back on %s: %w", name, cp, err)
		}
		if err := waitProcess(ctx, cp, comm, true); err != nil {
			return fmt.Errorf("start %s again: %w", name, err)
		}
		return nil
	}, nil
}

// freeze stops the processes named comm on the control-plane node with
// SIGSTOP and returns what continues them.
func (p *Provider) freeze(ctx context.Context, comm string) (func(context.Context) error, error) {
	cp, _, err := p.controlPlane()
	if err != nil {
		return nil, err
	}
	signal := func(ctx context.Context, sig string) error {
		script := `n=0; for f in /proc/[0-9]*/comm; do if [ "$(cat "$f" 2>/dev/null)" = "$1" ]; then d=${f%/comm}; kill -s "$2" "${d#/proc/}" && n=$((n+1)); fi; done; [ "$n" -gt 0 ]`
		if err := cp.CommandContext(ctx, "sh", "-c", script, "sh", comm, sig).Run(); err != nil {
			return fmt.Errorf("send SIG%s to %s on %s: %w", sig, comm, cp, err)
		}
		return nil
	}
	if err := signal(ctx, "STOP"); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error { return signal(ctx, "CONT") }, nil
}

// waitProcess waits until a process named comm runs on node (running) or
// none does. The node's PID namespace holds its Pods' processes.
func waitProcess(ctx context.Context, node nodes.Node, comm string, running bool) error {
	const timeout = 60 * time.Second
	script := `for f in /proc/[0-9]*/comm; do [ "$(cat "$f" 2>/dev/null)" = "$1" ] && exit 0; done; exit 1`
	var last bool
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		last = node.CommandContext(ctx, "sh", "-c", script, "sh", comm).Run() == nil
		return last == running, nil
	})
	if err != nil {
		return fmt.Errorf("waited %s for a process %q on %s to be running=%t; last seen running=%t: %w", timeout, comm, node, running, last, err)
	}
	return nil
}
