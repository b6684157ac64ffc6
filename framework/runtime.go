package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/kubeproof/kubeproof/framework/cluster"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RuntimeContainer is a container as the node's container runtime holds it:
// the pod sandbox or an application container, with its creation time.
type RuntimeContainer struct {
	ID        string
	Kind      string // "sandbox" or "container"
	Name      string // container name (empty for the sandbox)
	CreatedAt time.Time
}

// RuntimeContainers asks the containerd of a Pod's node (NodeExec) for the
// Pod's containers, oldest first.
func (f *Framework) RuntimeContainers(ctx context.Context, pod string) ([]RuntimeContainer, error) {
	if !f.Cluster.Has(cluster.NodeExec) || f.Cluster.ContainerdAddress == "" {
		return nil, fmt.Errorf("%s", f.Cluster.Missing(cluster.NodeExec))
	}
	p, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read Pod %s: %w", pod, err)
	}
	ctr := func(args ...string) ([]byte, error) {
		argv, env := f.Cluster.NodeCommand(p.Spec.NodeName,
			append([]string{"ctr", "--address", f.Cluster.ContainerdAddress, "--namespace", "k8s.io"}, args...)...)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("ctr %s on node %s: %w", strings.Join(args, " "), p.Spec.NodeName, err)
		}
		return out, nil
	}
	ids, err := ctr("containers", "ls", "-q")
	if err != nil {
		return nil, err
	}
	var out []RuntimeContainer
	for _, id := range strings.Fields(string(ids)) {
		raw, err := ctr("containers", "info", id)
		if err != nil {
			continue // removed meanwhile
		}
		var info struct {
			Labels    map[string]string
			CreatedAt time.Time
		}
		if err := json.Unmarshal(raw, &info); err != nil {
			return nil, fmt.Errorf("decode container %s: %w", id, err)
		}
		if info.Labels["io.kubernetes.pod.namespace"] != f.Namespace || info.Labels["io.kubernetes.pod.name"] != pod {
			continue
		}
		out = append(out, RuntimeContainer{ID: id, Kind: info.Labels["io.cri-containerd.kind"],
			Name: info.Labels["io.kubernetes.container.name"], CreatedAt: info.CreatedAt})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}
