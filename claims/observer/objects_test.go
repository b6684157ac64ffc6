package observer

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeproof/kubeproof/kube/observe"
)

func named(name, ready string) runtime.Object {
	return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": name},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": ready}}}}}
}

// A rollout as an objects observer sees it: counts after each change, and
// max and min taken from since's step on.
func TestObjectsHistory(t *testing.T) {
	spec := &Objects{APIVersion: "v1", Kind: "Pod", Selector: "app=web", Since: "rollout",
		Fields: map[string]string{"ready": `{.status.conditions[?(@.type=="Ready")].status}`}}
	if errs := spec.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	start := time.Unix(100, 0)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	env := &Env{Start: start, StepStarts: map[string]time.Time{"rollout": at(1000)}}
	vals, err := newObjectRecorder(env, spec.Fields)
	if err != nil {
		t.Fatal(err)
	}
	r := &objectsRecorder{spec: *spec, vals: vals}
	events := []observe.Event{
		{Type: watch.Added, Received: at(10), Object: named("a", "False")},
		{Type: watch.Modified, Received: at(500), Object: named("a", "True")},
		// the rollout: b comes, becomes ready, a goes
		{Type: watch.Added, Received: at(1100), Object: named("b", "False")},
		{Type: watch.Modified, Received: at(1900), Object: named("b", "True")},
		{Type: watch.Modified, Received: at(2000), Object: named("a", "False")},
		{Type: watch.Deleted, Received: at(2500), Object: named("a", "False")},
	}
	data, err := json.Marshal(r.history(events, env.StepStarts["rollout"], time.Time{}))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]any{
		"names":             []any{"a", "b"},
		"count":             2.0,
		"live":              map[string]any{"max": 2.0, "min": 1.0, "last": 1.0},
		"tally.ready.True":  map[string]any{"max": 2.0, "min": 1.0, "last": 1.0},
		"tally.ready.False": map[string]any{"max": 1.0, "min": 0.0, "last": 0.0},
	} {
		if v := lookup(got, path); !reflect.DeepEqual(v, want) {
			t.Errorf("%s = %#v, want %#v", path, v, want)
		}
	}
	tl := got["timeline"].([]any)
	if len(tl) != 6 || !reflect.DeepEqual(tl[3], map[string]any{"at": 1900.0, "live": 2.0, "ready": []any{"True", "True"}}) {
		t.Errorf("timeline = %v", tl)
	}
	if a := got["objects"].([]any)[0].(map[string]any); a["deletedAt"] != 2500.0 || !reflect.DeepEqual(lookup(a, "values.ready"), []any{"False", "True", "False"}) {
		t.Errorf("object a = %v", a)
	}
	typed := reflect.New(spec.Evidence()).Interface()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(typed); err != nil {
		t.Fatalf("the recorded evidence is not of the declared type: %v", err)
	}
}

func scaled(name string, replicas int64) runtime.Object {
	return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": name},
		"status": map[string]any{"replicas": replicas}}}
}

// until: stops the counts and ranges at another step's start; range holds a
// numeric field's smallest and largest value over the states counted.
func TestObjectsUntilAndRange(t *testing.T) {
	spec := &Objects{APIVersion: "apps/v1", Kind: "ReplicaSet", Selector: "app=web", Since: "rollout", Until: "rollback",
		Fields: map[string]string{"replicas": `{.status.replicas}`}}
	if errs := spec.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := spec.StepsNamed(); !reflect.DeepEqual(got, []string{"rollout", "rollback"}) {
		t.Errorf("steps named = %v", got)
	}
	start := time.Unix(100, 0)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	env := &Env{Start: start, StepStarts: map[string]time.Time{"rollout": at(1000), "rollback": at(3000)}}
	vals, err := newObjectRecorder(env, spec.Fields)
	if err != nil {
		t.Fatal(err)
	}
	r := &objectsRecorder{spec: *spec, vals: vals}
	events := []observe.Event{
		{Type: watch.Added, Received: at(10), Object: scaled("old", 9)},     // before since: not counted
		{Type: watch.Modified, Received: at(500), Object: scaled("old", 2)}, // the state when since began
		{Type: watch.Modified, Received: at(1000), Object: scaled("old", 3)},
		{Type: watch.Added, Received: at(1500), Object: scaled("new", 1)},
		{Type: watch.Modified, Received: at(2000), Object: scaled("new", 3)},
		{Type: watch.Modified, Received: at(3000), Object: scaled("new", 7)}, // at until: not counted
	}
	data, err := json.Marshal(r.history(events, env.StepStarts["rollout"], env.StepStarts["rollback"]))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if v := lookup(got, "range.replicas"); !reflect.DeepEqual(v, map[string]any{"min": 1.0, "max": 3.0}) {
		t.Errorf("range.replicas = %#v, want min 1, max 3 (9 before since, 7 at until)", v)
	}
	if v := lookup(got, "live"); !reflect.DeepEqual(v, map[string]any{"max": 2.0, "min": 1.0, "last": 2.0}) {
		t.Errorf("live = %#v", v)
	}
	changes := lookup(got["objects"].([]any)[1].(map[string]any), "changes.replicas")
	if cs, ok := changes.([]any); !ok || len(cs) != 3 {
		t.Errorf("new's changes = %#v, want three", changes)
	}
	typed := reflect.New(spec.Evidence()).Interface()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(typed); err != nil {
		t.Fatalf("the recorded evidence is not of the declared type: %v", err)
	}
}
