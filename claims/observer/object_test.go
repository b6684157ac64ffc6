package observer

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/kube/observe"
)

func pod(phase string, restarts int) runtime.Object {
	return &unstructured.Unstructured{Object: map[string]any{
		"status": map[string]any{"phase": phase, "containerStatuses": []any{map[string]any{"restartCount": int64(restarts)}}},
	}}
}

// TestHistory: the evidence of an object observer is what the watch
// delivered, field by field, and it decodes into the type lint checks
// claims against.
func TestHistory(t *testing.T) {
	spec := &Object{Ref: Ref{APIVersion: "v1", Kind: "Pod", Name: "web"},
		Fields: map[string]string{"phase": "{.status.phase}", "restarts": "{.status.containerStatuses[0].restartCount}", "absent": "{.status.nope}"}}
	if errs := spec.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	start := time.Unix(100, 0)
	o, err := newObjectRecorder(&Env{Start: start}, spec.Fields)
	if err != nil {
		t.Fatal(err)
	}
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	events := []observe.Event{
		{Type: watch.Added, Received: at(10), Object: pod("Pending", 0)},
		{Type: watch.Modified, Received: at(500), Object: pod("Running", 0)},
		{Type: watch.Modified, Received: at(1500), Object: pod("Running", 1)},
		{Type: watch.Modified, Received: at(4500), Object: pod("Running", 2)},
		{Type: watch.Deleted, Received: at(9000), Object: pod("Running", 2)},
	}
	h := o.history(events)
	data, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]any{
		"values.phase":       []any{"Pending", "Running"},
		"values.restarts":    []any{float64(0), float64(1), float64(2)},
		"intervals.restarts": []any{float64(1490), float64(3000)},
		"values.absent":      []any{nil},
		"first.phase":        "Pending",
		"last.restarts":      float64(2),
		"deleted":            true,
		"deletedAt":          float64(9000),
		"count":              float64(5),
	} {
		v := lookup(got, path)
		if !reflect.DeepEqual(v, want) {
			t.Errorf("%s = %#v, want %#v", path, v, want)
		}
	}
	typed := reflect.New(spec.Evidence()).Interface()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(typed); err != nil {
		t.Fatalf("the recorded evidence is not of the declared type: %v", err)
	}
}

// lookup follows a dot-separated path through decoded JSON.
func lookup(v any, path string) any {
	for _, p := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// What the runtime records (maps) decodes into the declared type, as
// the loader decodes: YAML to JSON, unknown fields refused.
func TestObjectEvidenceRoundTrip(t *testing.T) {
	typ := (&Object{Fields: map[string]string{"phase": "{.status.phase}"}}).Evidence()
	data := []byte(`{"versions":[{"at":1.5,"type":"ADDED","phase":"Pending"}],"first":{"phase":"Pending"},"last":{"phase":"Pending"},"values":{"phase":["Pending"]},"changes":{"phase":[{"at":1.5,"value":"Pending"}]},"intervals":{"phase":[]},"deleted":false,"deletedAt":null,"count":1}`)
	v := reflect.New(typ).Interface()
	if err := yaml.UnmarshalStrict(data, v); err != nil {
		t.Fatalf("the recorded shape is not the declared one: %v", err)
	}
}
