package observer

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeproof/kubeproof/kube/metrics"
)

// Metric reads a metric of a component when the probe starts and when it
// ends: the sum of its samples whose labels include Labels.
type Metric struct {
	// Component is kube-apiserver or kubelet.
	Component string `json:"component"`
	// Node is the kubelet's node; without it the cluster must have one node
	// (on a cluster of several the observer refuses to guess: its claims are
	// not checkable, naming the nodes).
	Node string `json:"node,omitempty"`
	// Name is the metric's name (apiserver_request_total).
	Name string `json:"name"`
	// Labels select its samples.
	Labels map[string]string `json:"labels,omitempty"`
}

// MetricEvidence is what a metric observer records.
type MetricEvidence struct {
	// Before and After are the metric's value when the probe started and
	// when it ended; Change is After - Before.
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	Change float64 `json:"change"`
}

func (m *Metric) Validate() []string {
	if m.Name == "" || !slices.Contains([]string{"kube-apiserver", "kubelet"}, m.Component) {
		return []string{"metric needs a name and a component (kube-apiserver or kubelet)"}
	}
	return nil
}

func (m *Metric) Evidence() reflect.Type { return reflect.TypeFor[MetricEvidence]() }

func (m *Metric) Explain(n string, put Explainer) {
	put(n, "The %s metric %s (the sum of its samples whose labels include %v) when the probe started and when it ended.", m.Component, m.Name, m.Labels)
	put(n+".before", "Its value when the probe started.")
	put(n+".after", "Its value when the probe ended.")
	put(n+".change", "after - before.")
}

// metricRecorder reads a metric at the probe's start and end.
type metricRecorder struct {
	env    *Env
	m      Metric
	before float64
}

func (m *Metric) Start(ctx context.Context, env *Env) (Recorder, error) {
	r := &metricRecorder{env: env, m: *m}
	v, err := r.read(ctx)
	if err != nil {
		return nil, err
	}
	r.before = v
	return r, nil
}

func (r *metricRecorder) read(ctx context.Context) (float64, error) {
	client := r.env.Client.CoreV1().RESTClient()
	var samples metrics.Samples
	var err error
	if r.m.Component == "kubelet" {
		node := r.m.Node
		if node == "" {
			nodes, lerr := r.env.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			if lerr != nil {
				return 0, fmt.Errorf("find the node for the kubelet's metric: %w", lerr)
			}
			if len(nodes.Items) != 1 {
				var names []string
				for _, n := range nodes.Items {
					names = append(names, n.Name)
				}
				return 0, fmt.Errorf("the kubelet's metric needs node: the cluster has %d nodes (%s), and the observer does not guess which one", len(nodes.Items), strings.Join(names, ", "))
			}
			node = nodes.Items[0].Name
		}
		samples, err = metrics.Kubelet(ctx, client, node)
	} else {
		samples, err = metrics.Scrape(ctx, client)
	}
	if err != nil {
		return 0, fmt.Errorf("read %s's metrics: %w", r.m.Component, err)
	}
	return samples.Sum(r.m.Name, r.m.Labels), nil
}

func (r *metricRecorder) Evidence() (any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), r.env.APITimeout)
	defer cancel()
	after, err := r.read(ctx)
	if err != nil {
		return nil, err
	}
	return MetricEvidence{Before: r.before, After: after, Change: after - r.before}, nil
}

func (r *metricRecorder) Stop() {}
