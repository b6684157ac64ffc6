package evidence

import (
	"encoding/json"
	"testing"
)

// # is a length; a list element past the end is absent, with why; a field
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
	if _, ok, why := Find(ev, "pod.first.phase"); ok || why != "" {
		t.Errorf("a field not recorded: %t, %q", ok, why)
	}
}
