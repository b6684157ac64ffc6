package observer

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeproof/kubeproof/kube/observe"
)

// Events are the Events about one object of the probe (its kind and name;
// apiVersion may be left out).
type Events struct {
	Ref `json:",inline"`
}

// EventRecord is one Event about the observed object.
type EventRecord struct {
	// Reason is the Event's reason (Scheduled, Pulled, BackOff, Killing).
	Reason string `json:"reason"`
	// Type is Normal or Warning.
	Type string `json:"type"`
	// Message is the Event's message.
	Message string `json:"message"`
	// Count is how many times the Event was reported (series included).
	Count int `json:"count"`
	// Source is the component that reported it (kubelet, default-scheduler).
	Source string `json:"source"`
	// At is when it was first seen by the watch (ms).
	At float64 `json:"at"`
}

// EventsEvidence is what an events observer records.
type EventsEvidence struct {
	// Events are every Event about the object, in the order seen.
	Events []EventRecord `json:"events"`
	// Reasons are the distinct reasons, in the order first seen.
	Reasons []string `json:"reasons"`
	// ByReason is the first Event of each reason, by reason: the time of
	// one kind of Event, whatever came before it
	// (events.byReason.Pulled.at).
	ByReason map[string]EventRecord `json:"byReason"`
	// Count is the number of distinct Events.
	Count int `json:"count"`
}

func (e *Events) Validate() []string {
	if e.Kind == "" || e.Name == "" {
		return []string{"events needs the kind and name of the object"}
	}
	return nil
}

func (e *Events) Evidence() reflect.Type { return reflect.TypeFor[EventsEvidence]() }

func (e *Events) Explain(n string, put Explainer) {
	obj := e.Ref.String()
	put(n, "The Events about %s.", obj)
	put(n+".events", "Every Event about %s, in the order seen.", obj)
	for f, text := range map[string]string{"reason": "Its reason (Scheduled, Pulled, BackOff, Killing).", "type": "Normal or Warning.",
		"message": "Its message.", "count": "How many times it was reported.", "source": "The component that reported it.", "at": "When the watch first saw it (ms)."} {
		put(n+".events.0."+f, "%s", text)
	}
	put(n+".reasons", "The distinct reasons of the Events about %s, in the order first seen.", obj)
	put(n+".reasons.0", "One reason.")
	put(n+".byReason", "The first Event of each reason about %s, by reason.", obj)
	for f, text := range map[string]string{"reason": "Its reason.", "type": "Normal or Warning.", "message": "Its message.",
		"count": "How many times it was reported.", "source": "The component that reported it.", "at": "When the watch first saw it (ms)."} {
		put(n+".byReason.{key}."+f, "%s", text)
	}
	put(n+".byReason.{key}", "The first Event of that reason.")
	put(n+".count", "How many distinct Events about %s were seen.", obj)
}

// eventsRecorder keeps the Events about one object.
type eventsRecorder struct {
	env *Env
	rec *observe.Recorder
}

func (e *Events) Start(ctx context.Context, env *Env) (Recorder, error) {
	sel := fields.Set{"involvedObject.name": e.Name, "involvedObject.kind": e.Kind}.AsSelector().String()
	events := env.Client.CoreV1().Events(env.Namespace)
	lw := observe.Selected(events.List, events.Watch, func(opts *metav1.ListOptions) { opts.FieldSelector = sel })
	rec, err := observe.Record(ctx, lw)
	if err != nil {
		return nil, fmt.Errorf("watch the Events of %s: %w", e.Ref, err)
	}
	return &eventsRecorder{env: env, rec: rec}, nil
}

func (r *eventsRecorder) Evidence() (any, error) {
	ev := EventsEvidence{Events: []EventRecord{}, Reasons: []string{}, ByReason: map[string]EventRecord{}}
	index := map[string]int{}
	for _, e := range r.rec.Events() {
		k, ok := e.Object.(*corev1.Event)
		if !ok || e.Type == watch.Deleted {
			continue
		}
		count := int(k.Count)
		if k.Series != nil && int(k.Series.Count) > count {
			count = int(k.Series.Count)
		}
		rec := EventRecord{Reason: k.Reason, Type: k.Type, Message: k.Message, Count: max(count, 1),
			Source: cmp.Or(k.Source.Component, k.ReportingController), At: r.env.Millis(e.Received)}
		if i, seen := index[string(k.UID)]; seen {
			rec.At = ev.Events[i].At
			ev.Events[i] = rec
			continue
		}
		index[string(k.UID)] = len(ev.Events)
		ev.Events = append(ev.Events, rec)
		if !slices.Contains(ev.Reasons, k.Reason) {
			ev.Reasons = append(ev.Reasons, k.Reason)
		}
	}
	ev.Count = len(ev.Events)
	for _, e := range ev.Events {
		if _, seen := ev.ByReason[e.Reason]; !seen {
			ev.ByReason[e.Reason] = e
		}
	}
	return ev, nil
}

func (r *eventsRecorder) Stop() { r.rec.Stop() }
