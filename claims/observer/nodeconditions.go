package observer

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeproof/kubeproof/kube/observe"
)

// NodeConditions follows a Node's conditions from the probe's start: for
// each condition type asked for, its status, reason and message over
// time (Ready turning False or Unknown, MemoryPressure turning True).
type NodeConditions struct {
	// Node is the Node's name (one the probe creates is followed from its
	// creation); without one, the cluster's only node (on a cluster of
	// several nodes, name one).
	Node string `json:"node,omitempty"`
	// Types are the condition types to follow (Ready, MemoryPressure,
	// DiskPressure, PIDPressure, NetworkUnavailable, or another a
	// component sets): each is a field of the evidence's conditions.
	Types []string `json:"types"`
}

// ConditionChange is a condition's status and reason from some time on.
type ConditionChange struct {
	// At is when the watch delivered it (ms); the state at the probe's
	// start is at about 0.
	At     float64 `json:"at"`
	Status string  `json:"status"`
	Reason string  `json:"reason"`
}

// ConditionHistory is one condition type's history on the Node.
type ConditionHistory struct {
	// Status is the condition's last status (True, False, Unknown); empty
	// while the Node has no condition of the type.
	Status string `json:"status"`
	// Reason and Message are the last ones the condition had.
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// Statuses are the distinct successive statuses, in order.
	Statuses []string `json:"statuses"`
	// Changes are when each status (or, the status unchanged, reason)
	// began.
	Changes []ConditionChange `json:"changes"`
}

var conditionTypeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*$`)

func (n *NodeConditions) Validate() []string {
	var errs []string
	if len(n.Types) == 0 {
		errs = append(errs, "nodeConditions needs types (Ready, MemoryPressure, ...)")
	}
	for _, t := range n.Types {
		if !conditionTypeRE.MatchString(t) {
			errs = append(errs, fmt.Sprintf("nodeConditions: type %q must be letters and digits", t))
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(n.Types)))) != len(n.Types) {
		errs = append(errs, "nodeConditions: a type is named twice")
	}
	return errs
}

// Evidence is the node's name, how many versions of it were seen, and a
// field of conditions per type asked for.
func (n *NodeConditions) Evidence() reflect.Type {
	return reflect.StructOf([]reflect.StructField{
		{Name: "Node", Type: reflect.TypeFor[string](), Tag: `json:"node"`},
		{Name: "Count", Type: reflect.TypeFor[int](), Tag: `json:"count"`},
		{Name: "Conditions", Type: structOf(n.Types, reflect.TypeFor[ConditionHistory]()), Tag: `json:"conditions"`},
	})
}

func (n *NodeConditions) Explain(name string, put Explainer) {
	node := "the cluster's only Node"
	if n.Node != "" {
		node = "Node " + n.Node
	}
	put(name, "The conditions %s had while the probe ran, from a watch.", node)
	put(name+".node", "The Node's name.")
	put(name+".count", "How many versions of the Node were seen (the one at the start included).")
	put(name+".conditions", "Each condition type asked for: %s.", strings.Join(n.Types, ", "))
	for _, t := range n.Types {
		base := name + ".conditions." + t
		put(base, "The %s condition's history.", t)
		put(base+".status", "%s's last status (True, False, Unknown); empty while the Node had none.", t)
		put(base+".reason", "%s's last reason.", t)
		put(base+".message", "%s's last message.", t)
		put(base+".statuses", "%s's distinct successive statuses, in order.", t)
		put(base+".statuses.0", "One status.")
		put(base+".changes", "When each status (or reason) of %s began.", t)
		put(base+".changes.0.at", "When the watch delivered it (ms; the state at the start at about 0).")
		put(base+".changes.0.status", "The status from then on.")
		put(base+".changes.0.reason", "The reason from then on.")
	}
}

// nodeRecorder follows one Node.
type nodeRecorder struct {
	env  *Env
	spec NodeConditions
	node string
	// first is the Node when the probe started, nil if it did not exist.
	first *observe.Event
	rec   *observe.Recorder
}

func (n *NodeConditions) Start(ctx context.Context, env *Env) (Recorder, error) {
	node, err := n.node(ctx, env)
	if err != nil {
		return nil, err
	}
	nodes := env.Client.CoreV1().Nodes()
	r := &nodeRecorder{env: env, spec: *n, node: node}
	if r.rec, err = observe.Record(ctx, observe.Named(nodes.List, nodes.Watch, node)); err != nil {
		return nil, fmt.Errorf("watch Node %s: %w", node, err)
	}
	// The watch gives changes only: the state the probe starts from is
	// read once it runs, so that no change falls between the two.
	obj, err := nodes.Get(ctx, node, metav1.GetOptions{})
	switch {
	case err == nil:
		r.first = &observe.Event{Type: watch.Added, Received: env.Start, Object: obj}
	case !apierrors.IsNotFound(err) || n.Node == "":
		r.rec.Stop()
		return nil, fmt.Errorf("read Node %s: %w", node, err)
	}
	return r, nil
}

// node is the Node the spec names, or the cluster's only one.
func (n *NodeConditions) node(ctx context.Context, env *Env) (string, error) {
	if n.Node != "" {
		return n.Node, nil
	}
	ctx, cancel := context.WithTimeout(ctx, env.APITimeout)
	defer cancel()
	list, err := env.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("list the Nodes: %w", err)
	}
	var names []string
	for _, node := range list.Items {
		names = append(names, node.Name)
	}
	if len(names) != 1 {
		return "", fmt.Errorf("nodeConditions names no node and the cluster has %d (%s): name one", len(names), strings.Join(names, ", "))
	}
	return names[0], nil
}

func (r *nodeRecorder) Evidence() (any, error) {
	events := r.rec.Events()
	if r.first != nil {
		events = append([]observe.Event{*r.first}, events...)
	}
	return r.history(events), nil
}

// history folds the Node's versions into each condition's history.
func (r *nodeRecorder) history(events []observe.Event) map[string]any {
	conds := map[string]*ConditionHistory{}
	for _, t := range r.spec.Types {
		conds[t] = &ConditionHistory{Statuses: []string{}, Changes: []ConditionChange{}}
	}
	count := 0
	for _, e := range events {
		node, ok := e.Object.(*corev1.Node)
		if !ok || node.Name != r.node || e.Type == watch.Deleted {
			continue
		}
		count++
		for _, t := range r.spec.Types {
			h := conds[t]
			c := condition(node, t)
			if c == nil {
				continue
			}
			h.Status, h.Reason, h.Message = string(c.Status), c.Reason, c.Message
			if n := len(h.Changes); n > 0 && h.Changes[n-1].Status == h.Status && h.Changes[n-1].Reason == h.Reason {
				continue
			}
			h.Changes = append(h.Changes, ConditionChange{At: r.env.Millis(e.Received), Status: h.Status, Reason: h.Reason})
			if n := len(h.Statuses); n == 0 || h.Statuses[n-1] != h.Status {
				h.Statuses = append(h.Statuses, h.Status)
			}
		}
	}
	return map[string]any{"node": r.node, "count": count, "conditions": conds}
}

func condition(node *corev1.Node, t string) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if string(node.Status.Conditions[i].Type) == t {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

func (r *nodeRecorder) Stop() { r.rec.Stop() }
