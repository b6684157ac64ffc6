// Package trace measures the creation timeline of a manifest on a real
// cluster: it applies pod.yaml or deployment.yaml with kubectl and times
// each stage from the API server's receipt of the request to a ready
// endpoint, each from the most precise source that records it: the audit
// log (microseconds), kubeproof's admission webhook (its arrival, this
// machine's clock), the node's container runtime (nanoseconds), and Pod
// conditions (seconds) only where nothing better exists.
package trace

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Sources of a stage's time.
const (
	SourceAudit     = "audit log (µs)"
	SourceWebhook   = "admission webhook arrival (µs, this machine's clock)"
	SourceRuntime   = "container runtime (ns)"
	SourceCondition = "Pod condition (1 s)"
	SourceWatch     = "watch receipt (observer's clock)"
	SourceClient    = "kubectl start (client clock)"
	SourceNone      = "not recorded"
)

// Stage is one step of the timeline.
type Stage struct {
	Name string `json:"name"`
	// Ms is the time since the request was received, in milliseconds; nil
	// when no source recorded it.
	Ms     *float64 `json:"ms"`
	Source string   `json:"source"`
	Note   string   `json:"note,omitempty"`
}

// Run is one traced apply.
type Run struct {
	Namespace string    `json:"namespace"`
	Started   time.Time `json:"started"`
	// Pod is the Pod the pod-level stages follow (the first created).
	Pod    string  `json:"pod"`
	Node   string  `json:"node"`
	Stages []Stage `json:"stages"`
}

// Percentiles summarise a stage over runs.
type Percentiles struct {
	Stage  string  `json:"stage"`
	Source string  `json:"source"`
	N      int     `json:"n"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P99    float64 `json:"p99"`
}

// Result is a trace: every run and, over them, the percentiles.
type Result struct {
	// SchemaVersion names this document's shape (Schema); within a version
	// fields are only added.
	SchemaVersion string        `json:"schemaVersion"`
	Manifest      string        `json:"manifest"`
	Kind          string        `json:"kind"`
	Cluster       string        `json:"cluster"`
	Provider      string        `json:"provider"`
	Runs          []Run         `json:"runs"`
	Summary       []Percentiles `json:"summary"`
}

// Schema names the shape of `kubeproof trace -o json` (Result).
const Schema = "kubeproof.io/trace/v1"

// workload is what trace needs to know of the manifest.
type workload struct {
	kind     string // Pod or Deployment
	name     string
	replicas int
	labels   map[string]string // of the Pods
	port     intstr.IntOrString
}

// CheckManifest reports whether trace can follow the manifest, so that a
// wrong file is refused before any cluster is brought up.
func CheckManifest(data []byte) error {
	_, err := parseManifest(data)
	return err
}

// parseManifest reads the one Pod or Deployment of a manifest.
func parseManifest(data []byte) (workload, error) {
	dec := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var found []workload
	for {
		doc, err := dec.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return workload{}, fmt.Errorf("read manifest: %w", err)
		}
		var head struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil || head.Kind == "" {
			continue
		}
		switch head.Kind {
		case "Pod":
			var p corev1.Pod
			if err := yaml.Unmarshal(doc, &p); err != nil {
				return workload{}, fmt.Errorf("parse Pod: %w", err)
			}
			found = append(found, workload{kind: "Pod", name: p.Name, replicas: 1, labels: p.Labels, port: firstPort(p.Spec)})
		case "Deployment":
			var d appsv1.Deployment
			if err := yaml.Unmarshal(doc, &d); err != nil {
				return workload{}, fmt.Errorf("parse Deployment: %w", err)
			}
			n := 1
			if d.Spec.Replicas != nil {
				n = int(*d.Spec.Replicas)
			}
			found = append(found, workload{kind: "Deployment", name: d.Name, replicas: n, labels: d.Spec.Template.Labels, port: firstPort(d.Spec.Template.Spec)})
		default:
			return workload{}, fmt.Errorf("manifest has a %s: trace follows one Pod or one Deployment", head.Kind)
		}
	}
	if len(found) != 1 {
		return workload{}, fmt.Errorf("manifest has %d Pods and Deployments: trace follows exactly one", len(found))
	}
	w := found[0]
	if w.name == "" {
		return workload{}, fmt.Errorf("the %s has no metadata.name", w.kind)
	}
	if len(w.labels) == 0 {
		return workload{}, fmt.Errorf("the %s's Pods have no labels: no Service can select them for the endpoint stage", w.kind)
	}
	return w, nil
}

func firstPort(spec corev1.PodSpec) intstr.IntOrString {
	for _, c := range spec.Containers {
		for _, p := range c.Ports {
			return intstr.FromInt32(p.ContainerPort)
		}
	}
	return intstr.FromInt32(8080)
}

// summarize computes, per stage, the percentiles over runs (nearest rank).
func summarize(runs []Run) []Percentiles {
	if len(runs) == 0 {
		return nil
	}
	var out []Percentiles
	for i, s := range runs[0].Stages {
		var vals []float64
		for _, r := range runs {
			if i < len(r.Stages) && r.Stages[i].Ms != nil {
				vals = append(vals, *r.Stages[i].Ms)
			}
		}
		p := Percentiles{Stage: s.Name, Source: s.Source, N: len(vals)}
		if len(vals) > 0 {
			sort.Float64s(vals)
			p.P50, p.P90, p.P99 = Quantile(vals, 0.50), Quantile(vals, 0.90), Quantile(vals, 0.99)
		}
		out = append(out, p)
	}
	return out
}

// Quantile is the nearest-rank q-quantile of sorted values.
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(q*float64(len(sorted)) + 0.999999)
	if rank < 1 {
		rank = 1
	}
	if rank > len(sorted) {
		rank = len(sorted)
	}
	return sorted[rank-1]
}

// ms returns the milliseconds from t0 to t, as a stage value.
func ms(t0, t time.Time) *float64 {
	if t.IsZero() {
		return nil
	}
	v := float64(t.Sub(t0).Microseconds()) / 1000
	return &v
}

// joinNonEmpty joins the non-empty parts.
func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}
