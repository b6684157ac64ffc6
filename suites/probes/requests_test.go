package probes

import (
	"encoding/json"
	"slices"
	"testing"
)

// A field behind a disabled feature gate is dropped, not refused: the
// object the API server returns lacks it. Defaults and normalised values
// are not drops.
func TestDropped(t *testing.T) {
	var sent, got map[string]any
	if err := json.Unmarshal([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{}},
	  "spec":{"containers":[{"name":"a","image":"i","resources":{"limits":{"cpu":"1000m"}},"lifecycle":{"stopSignal":"SIGUSR1","preStop":{"exec":{"command":["x"]}}}}]},
	  "status":{"phase":"Running"}}`), &sent); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","uid":"u"},
	  "spec":{"containers":[{"name":"a","image":"i","resources":{"limits":{"cpu":"1"}},"lifecycle":{"preStop":{"exec":{"command":["x"]}}},"terminationMessagePath":"/dev/termination-log"}],"restartPolicy":"Always"},
	  "status":{"phase":"Pending"}}`), &got); err != nil {
		t.Fatal(err)
	}
	if d := Dropped(sent, got); !slices.Equal(d, []string{"spec.containers.0.lifecycle.stopSignal"}) {
		t.Errorf("dropped = %v", d)
	}
	if d := Dropped(got, got); len(d) != 0 {
		t.Errorf("an object against itself: %v", d)
	}
}
