// Package noderuntime asks a node's container runtime (containerd, through
// ctr on the node) about a Pod's sandbox and containers: what the API does
// not show, such as which came first and when, to the nanosecond.
package noderuntime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kubeproof/kubeproof/contract/cluster"
)

// Container is a container as the runtime holds it: the Pod's sandbox or an
// application container, with its creation time.
type Container struct {
	ID        string
	Kind      string // "sandbox" or "container"
	Name      string // container name (empty for the sandbox)
	Image     string
	CreatedAt time.Time
}

// Containers returns the runtime's containers of Pod namespace/pod on node,
// oldest first. It needs the cluster's NodeExec capability.
func Containers(ctx context.Context, info *cluster.Info, node, namespace, pod string) ([]Container, error) {
	if info.ContainerdAddress == "" {
		return nil, fmt.Errorf("%s", info.Missing(cluster.NodeExec))
	}
	ctr := func(args ...string) ([]byte, error) { return ctr(ctx, info, node, args...) }
	// Only the Pod's containers, by the labels the CRI plugin gives them:
	// a node runs many, and each info is a command of its own.
	ids, err := ctr("containers", "ls", "-q",
		`labels."io.kubernetes.pod.namespace"==`+namespace+`,labels."io.kubernetes.pod.name"==`+pod)
	if err != nil {
		return nil, err
	}
	var out []Container
	for _, id := range strings.Fields(string(ids)) {
		raw, err := ctr("containers", "info", id)
		if err != nil {
			continue // removed meanwhile
		}
		var c struct {
			Labels    map[string]string
			Image     string
			CreatedAt time.Time
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("decode container %s: %w", id, err)
		}
		if c.Labels["io.kubernetes.pod.namespace"] != namespace || c.Labels["io.kubernetes.pod.name"] != pod {
			continue
		}
		out = append(out, Container{ID: id, Kind: c.Labels["io.cri-containerd.kind"],
			Name: c.Labels["io.kubernetes.container.name"], Image: c.Image, CreatedAt: c.CreatedAt})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

// Exec runs args in the running container id on node, as the container's
// own process (ctr tasks exec), and returns its standard output. It goes
// through the node's containerd only, not the API server: what a Pod does
// while the control plane is away.
func Exec(ctx context.Context, info *cluster.Info, node, id string, args ...string) ([]byte, error) {
	if info.ContainerdAddress == "" {
		return nil, fmt.Errorf("%s", info.Missing(cluster.NodeExec))
	}
	suffix := make([]byte, 4)
	if _, err := rand.Read(suffix); err != nil {
		return nil, fmt.Errorf("name the exec: %w", err)
	}
	return ctr(ctx, info, node, append([]string{"tasks", "exec", "--exec-id", "kubeproof-" + hex.EncodeToString(suffix), id}, args...)...)
}

// Task is a container's running process as the runtime holds it.
type Task struct {
	// PID is its main process's, in the node's PID namespace.
	PID    int
	Status string // RUNNING, STOPPED, ...
}

// Tasks returns the runtime's tasks on node by container ID.
func Tasks(ctx context.Context, info *cluster.Info, node string) (map[string]Task, error) {
	if info.ContainerdAddress == "" {
		return nil, fmt.Errorf("%s", info.Missing(cluster.NodeExec))
	}
	out, err := ctr(ctx, info, node, "tasks", "ls")
	if err != nil {
		return nil, err
	}
	tasks := map[string]Task{}
	for i, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if i == 0 || len(f) < 3 {
			continue // the header
		}
		pid, err := strconv.Atoi(f[1])
		if err != nil {
			return nil, fmt.Errorf("ctr tasks ls: PID %q of %s", f[1], f[0])
		}
		tasks[f[0]] = Task{PID: pid, Status: f[2]}
	}
	return tasks, nil
}

// Images returns the names of the runtime's images on node (not their
// digests), sorted.
func Images(ctx context.Context, info *cluster.Info, node string) ([]string, error) {
	if info.ContainerdAddress == "" {
		return nil, fmt.Errorf("%s", info.Missing(cluster.NodeExec))
	}
	out, err := ctr(ctx, info, node, "images", "ls", "-q")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range strings.Fields(string(out)) {
		if !strings.HasPrefix(n, "sha256:") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names, nil
}

// Signal sends sig (KILL, TERM...) to the main process of container id on
// node through the runtime: neither the API server nor the kubelet is
// asked.
func Signal(ctx context.Context, info *cluster.Info, node, id, sig string) error {
	if info.ContainerdAddress == "" {
		return fmt.Errorf("%s", info.Missing(cluster.NodeExec))
	}
	_, err := ctr(ctx, info, node, "tasks", "kill", "--signal", "SIG"+sig, id)
	return err
}

// ctr runs the node's ctr against its containerd, in the CRI's namespace.
func ctr(ctx context.Context, info *cluster.Info, node string, args ...string) ([]byte, error) {
	program := info.Ctr
	if program == "" {
		program = "ctr"
	}
	return info.RunOnNode(ctx, node, append([]string{program, "--address", info.ContainerdAddress, "--namespace", "k8s.io"}, args...)...)
}
