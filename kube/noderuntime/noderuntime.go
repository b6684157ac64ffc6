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
			CreatedAt time.Time
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("decode container %s: %w", id, err)
		}
		if c.Labels["io.kubernetes.pod.namespace"] != namespace || c.Labels["io.kubernetes.pod.name"] != pod {
			continue
		}
		out = append(out, Container{ID: id, Kind: c.Labels["io.cri-containerd.kind"],
			Name: c.Labels["io.kubernetes.container.name"], CreatedAt: c.CreatedAt})
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

// ctr runs the node's ctr against its containerd, in the CRI's namespace.
func ctr(ctx context.Context, info *cluster.Info, node string, args ...string) ([]byte, error) {
	program := info.Ctr
	if program == "" {
		program = "ctr"
	}
	return info.RunOnNode(ctx, node, append([]string{program, "--address", info.ContainerdAddress, "--namespace", "k8s.io"}, args...)...)
}
