package observer

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Where names the node an observer of a node reads: the one a Pod of the
// probe runs on, or one by name.
type Where struct {
	// Pod is a Pod of the probe: its node is read (once the Pod is bound).
	Pod string `json:"pod,omitempty"`
	// Node is a node's name; without Pod or Node, the cluster's only node
	// (a cluster of several nodes needs one named).
	Node string `json:"node,omitempty"`
}

// placeTracker finds, and remembers, the node a Pod runs on and its UID:
// a Pod that is deleted meanwhile is still read where it ran.
type placeTracker struct {
	where Where
	node  string
	uid   string
}

// place returns the node to read and the Pod's UID; ok is false while the
// Pod is not yet bound to a node (nothing to read yet).
func (t *placeTracker) place(ctx context.Context, env *Env) (node, uid string, ok bool, err error) {
	if t.where.Pod == "" {
		if t.node == "" {
			if t.node, err = t.onlyNode(ctx, env); err != nil {
				return "", "", false, err
			}
		}
		return t.node, "", true, nil
	}
	ctx, cancel := context.WithTimeout(ctx, env.APITimeout)
	defer cancel()
	pod, err := env.Client.CoreV1().Pods(env.Namespace).Get(ctx, t.where.Pod, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		// Gone (or not made yet): read where it was, if it was seen.
	case err != nil:
		return "", "", false, fmt.Errorf("read Pod %s: %w", t.where.Pod, err)
	case pod.Spec.NodeName != "":
		t.node, t.uid = pod.Spec.NodeName, string(pod.UID)
	}
	if t.where.Node != "" {
		t.node = t.where.Node
	}
	return t.node, t.uid, t.node != "" && t.uid != "", nil
}

// onlyNode is the node named, or the cluster's only node.
func (t *placeTracker) onlyNode(ctx context.Context, env *Env) (string, error) {
	if t.where.Node != "" {
		return t.where.Node, nil
	}
	ctx, cancel := context.WithTimeout(ctx, env.APITimeout)
	defer cancel()
	nodes, err := env.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("list the nodes: %w", err)
	}
	if len(nodes.Items) != 1 {
		return "", fmt.Errorf("the cluster has %d nodes: name the node (node:) or a Pod that runs on it (pod:)", len(nodes.Items))
	}
	return nodes.Items[0].Name, nil
}

// onNode runs a command on node (the NodeExec capability).
func (env *Env) onNode(ctx context.Context, node string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, env.APITimeout)
	defer cancel()
	return env.Cluster.RunOnNode(ctx, node, args...)
}

// placeholders writes the run's own names in s as placeholders, so that
// a claim compares it with a document's example: the probe's namespace as
// {namespace}, the Pod's UID as {uid} (also as the systemd cgroup driver
// writes it, with underscores).
func (env *Env) placeholders(s, uid string) string {
	if uid != "" {
		s = strings.ReplaceAll(s, uid, "{uid}")
		s = strings.ReplaceAll(s, strings.ReplaceAll(uid, "-", "_"), "{uid}")
	}
	return strings.ReplaceAll(s, env.Namespace, "{namespace}")
}
