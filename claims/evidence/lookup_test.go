package evidence

import (
	"encoding/json"
	"reflect"
	"testing"
)

// # is a length; a list element past the end, a path through a null and a
// field the recorded object lacks are absent, with why; an evidence name
// that was not recorded is not.
func TestFind(t *testing.T) {
	var ev map[string]any
	if err := json.Unmarshal([]byte(`{"pod":{"values":{"phase":["Pending","Running"]},"last":{"ready":null,"name":"web"}}}`), &ev); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]any{"pod.values.phase.#": 2.0, "pod.last.name.#": 3.0, "pod.last.ready.#": 0.0, "pod.last.#": 2.0} {
		if v, ok, _ := Find(ev, path); !ok || v != want {
			t.Errorf("%s = %v, %t; want %v", path, v, ok, want)
		}
	}
	if _, ok, why := Find(ev, "pod.values.phase.2"); ok || why != "pod.values.phase has 2 elements: none at 2" {
		t.Errorf("past the end: %t, %q", ok, why)
	}
	if _, ok, why := Find(ev, "pod.last.ready.reason"); ok || why != "pod.last.ready is null" {
		t.Errorf("through a null: %t, %q", ok, why)
	}
	if _, ok, why := Find(ev, "pod.first.phase"); ok || why != "pod has no first" {
		t.Errorf("a field the object lacks: %t, %q", ok, why)
	}
	if _, ok, why := Find(ev, "pod.last.reason"); ok || why != "pod.last has no reason" {
		t.Errorf("a field the object lacks: %t, %q", ok, why)
	}
	if _, ok, why := Find(ev, "node.name"); ok || why != "" {
		t.Errorf("an evidence name not recorded: %t, %q", ok, why)
	}
}

// A field tagged omitempty may be left out; one without is always
// written; a map's key may be missing.
func TestOmittable(t *testing.T) {
	type watch struct {
		Code  int               `json:"code"`
		Error string            `json:"firstLineError,omitempty"`
		At    *struct{ N int }  `json:"at,omitzero"`
		Keys  map[string]string `json:"keys"`
	}
	typ := reflect.TypeFor[watch]()
	for path, want := range map[string][2]bool{
		"w.code": {false, true}, "w.firstLineError": {true, true}, "w.at": {true, true},
		"w.at.N": {false, true}, "w.keys.x": {true, true}, "w.nothing": {false, false}, "w": {false, false},
	} {
		if o, k := Omittable(typ, path); o != want[0] || k != want[1] {
			t.Errorf("%s: omittable %t, known %t; want %v", path, o, k, want)
		}
	}
}
