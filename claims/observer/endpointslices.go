package observer

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeproof/kubeproof/kube/observe"
)

// EndpointSlices is the membership of a Service's EndpointSlices over
// time: which Pods were ready, serving, terminating.
type EndpointSlices struct {
	// Service names a Service of the probe.
	Service string `json:"service"`
}

// SliceVersion is a Service's endpoints at one time.
type SliceVersion struct {
	// At is when the watch delivered it (ms).
	At float64 `json:"at"`
	// Ready, Serving and Terminating name the Pods whose endpoint had the
	// condition true; All names every Pod with an endpoint.
	Ready       []string `json:"ready"`
	Serving     []string `json:"serving"`
	Terminating []string `json:"terminating"`
	All         []string `json:"all"`
}

// EndpointsEvidence is what an endpointSlices observer records.
type EndpointsEvidence struct {
	// Versions are the Service's endpoints after each change, in order.
	Versions []SliceVersion `json:"versions"`
	// Last is the endpoints at the end of the probe.
	Last SliceVersion `json:"last"`
	// EverReady names every Pod that was ready at some time.
	EverReady []string `json:"everReady"`
}

func (s *EndpointSlices) Validate() []string {
	if s.Service == "" {
		return []string{"endpointSlices needs a service"}
	}
	return nil
}

func (s *EndpointSlices) Evidence() reflect.Type { return reflect.TypeFor[EndpointsEvidence]() }

func (s *EndpointSlices) Explain(n string, put Explainer) {
	svc := s.Service
	put(n, "The endpoints of Service %s over time, from its EndpointSlices.", svc)
	put(n+".versions", "Service %s's endpoints after each change, in order.", svc)
	put(n+".last", "Service %s's endpoints when the probe ended.", svc)
	put(n+".everReady", "Every Pod that was a ready endpoint of %s at some time.", svc)
	put(n+".everReady.0", "One Pod's name.")
	for _, base := range []string{n + ".versions.0", n + ".last"} {
		put(base+".at", "When the change was seen (ms).")
		put(base+".ready", "The Pods whose endpoint was ready.")
		put(base+".serving", "The Pods whose endpoint was serving.")
		put(base+".terminating", "The Pods whose endpoint was terminating.")
		put(base+".all", "Every Pod with an endpoint.")
		for _, l := range []string{"ready", "serving", "terminating", "all"} {
			put(base+"."+l+".0", "One Pod's name.")
		}
	}
}

// slicesRecorder follows a Service's EndpointSlices.
type slicesRecorder struct {
	env *Env
	rec *observe.Recorder
}

func (s *EndpointSlices) Start(ctx context.Context, env *Env) (Recorder, error) {
	es := env.Client.DiscoveryV1().EndpointSlices(env.Namespace)
	lw := observe.Selected(es.List, es.Watch,
		func(opts *metav1.ListOptions) { opts.LabelSelector = discoveryv1.LabelServiceName + "=" + s.Service })
	rec, err := observe.Record(ctx, lw)
	if err != nil {
		return nil, fmt.Errorf("watch the EndpointSlices of Service %s: %w", s.Service, err)
	}
	return &slicesRecorder{env: env, rec: rec}, nil
}

// FieldNames are the lists a wait step waits on: the Pods whose endpoint
// has a condition, or every Pod with an endpoint (as last.<field> reads
// them).
func (s *EndpointSlices) FieldNames() []string {
	return []string{"all", "ready", "serving", "terminating"}
}

// WaitField waits on the watch until the Service's endpoints, as the
// events so far make them, meet holds: a probe waits for the EndpointSlice
// controller to publish a change instead of pausing.
func (r *slicesRecorder) WaitField(ctx context.Context, timeout time.Duration, what, field string, holds func(any) bool) error {
	var last map[string]any
	_, err := r.rec.WaitFor(ctx, timeout, what, func(events []observe.Event) bool {
		last, _ = jsonValue(sliceVersion(observe.Latest[*discoveryv1.EndpointSlice](events))).(map[string]any)
		return holds(last[field])
	}, func(observe.Event) string { return fmt.Sprintf("%s = %v", field, last[field]) })
	return err
}

func (r *slicesRecorder) WaitDeleted(context.Context, time.Duration, string) error {
	return fmt.Errorf("an endpointSlices observer waits on a field (all, ready, serving, terminating), not deleted")
}

func (r *slicesRecorder) Evidence() (any, error) {
	ev := EndpointsEvidence{Versions: []SliceVersion{}, EverReady: []string{}}
	current := map[string]*discoveryv1.EndpointSlice{}
	for _, e := range r.rec.Events() {
		es, ok := e.Object.(*discoveryv1.EndpointSlice)
		if !ok {
			continue
		}
		if e.Type == watch.Deleted {
			delete(current, es.Name)
		} else {
			current[es.Name] = es
		}
		v := sliceVersion(current)
		v.At = r.env.Millis(e.Received)
		ev.Versions = append(ev.Versions, v)
		for _, p := range v.Ready {
			if !slices.Contains(ev.EverReady, p) {
				ev.EverReady = append(ev.EverReady, p)
			}
		}
	}
	ev.Last = sliceVersion(current)
	if n := len(ev.Versions); n > 0 {
		ev.Last.At = ev.Versions[n-1].At
	}
	return ev, nil
}

// sliceVersion is the endpoints of the slices, by Pod name, sorted.
func sliceVersion(current map[string]*discoveryv1.EndpointSlice) SliceVersion {
	v := SliceVersion{Ready: []string{}, Serving: []string{}, Terminating: []string{}, All: []string{}}
	for _, es := range current {
		for _, ep := range es.Endpoints {
			name := ""
			if ep.TargetRef != nil {
				name = ep.TargetRef.Name
			}
			v.All = append(v.All, name)
			c := ep.Conditions
			if c.Ready != nil && *c.Ready {
				v.Ready = append(v.Ready, name)
			}
			if c.Serving != nil && *c.Serving {
				v.Serving = append(v.Serving, name)
			}
			if c.Terminating != nil && *c.Terminating {
				v.Terminating = append(v.Terminating, name)
			}
		}
	}
	for _, l := range [][]string{v.Ready, v.Serving, v.Terminating, v.All} {
		sort.Strings(l)
	}
	return v
}

func (r *slicesRecorder) Stop() { r.rec.Stop() }
