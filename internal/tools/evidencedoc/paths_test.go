package evidencedoc

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/kubeproof/kubeproof/claims/evidence"
)

type inner struct {
	Name string `json:"name"`
}

type embedded struct {
	Promoted int `json:"promoted"`
}

type sample struct {
	embedded
	Events  []string          `json:"events"`
	Items   []inner           `json:"items"`
	Labels  map[string]string `json:"labels"`
	ByZone  map[string]inner  `json:"byZone"`
	Ptr     *inner            `json:"ptr,omitempty"`
	At      time.Time         `json:"at"`
	Ms      float64           `json:"ms"`
	Grid    [][]int           `json:"grid"`
	Raw     []byte            `json:"raw"`
	Skipped string            `json:"-"`
	Anon    []struct {
		Deep bool `json:"deep"`
	} `json:"anon"`
	unexported int //nolint:unused // never encoded: Expand must leave it out
}

// Each path of a struct with lists, maps, a pointer and a time: its JSON
// type and the Go field its meaning is read from.
func TestExpand(t *testing.T) {
	const pkg = "github.com/kubeproof/kubeproof/internal/tools/evidencedoc."
	want := []struct{ path, typ, docKey string }{
		{"s", "object", ""},
		{"s.anon", "list of object", pkg + "sample.Anon"},
		{"s.anon.0.deep", "bool", pkg + "sample.Anon.Deep"},
		{"s.at", "string (time)", pkg + "sample.At"},
		{"s.byZone", "map of string to object", pkg + "sample.ByZone"},
		{"s.byZone.{key}.name", "string", pkg + "inner.Name"},
		{"s.events", "list of string", pkg + "sample.Events"},
		{"s.events.0", "string", pkg + "sample.Events"},
		{"s.grid", "list of list of number", pkg + "sample.Grid"},
		{"s.grid.0", "list of number", pkg + "sample.Grid"},
		{"s.grid.0.0", "number", pkg + "sample.Grid"},
		{"s.items", "list of object", pkg + "sample.Items"},
		{"s.items.0.name", "string", pkg + "inner.Name"},
		{"s.labels", "map of string to string", pkg + "sample.Labels"},
		{"s.labels.{key}", "string", pkg + "sample.Labels"},
		{"s.ms", "number", pkg + "sample.Ms"},
		{"s.promoted", "number", pkg + "embedded.Promoted"},
		{"s.ptr", "object", pkg + "sample.Ptr"},
		{"s.ptr.name", "string", pkg + "inner.Name"},
		{"s.raw", "string (base64)", pkg + "sample.Raw"},
	}
	got := Expand("s", reflect.TypeFor[sample]())
	if len(got) != len(want) {
		var paths []string
		for _, n := range got {
			paths = append(paths, n.Path)
		}
		t.Fatalf("Expand: %d paths, want %d: %v", len(got), len(want), paths)
	}
	for i, w := range want {
		n := got[i]
		if n.Path != w.path || JSONType(n.Type) != w.typ || n.DocKey != w.docKey {
			t.Errorf("path %d: %s (%s, %q), want %s (%s, %q)", i, n.Path, JSONType(n.Type), n.DocKey, w.path, w.typ, w.docKey)
		}
	}
}

func TestJSONType(t *testing.T) {
	for _, c := range []struct {
		t    reflect.Type
		want string
	}{
		{reflect.TypeFor[string](), "string"},
		{reflect.TypeFor[*int32](), "number"},
		{reflect.TypeFor[bool](), "bool"},
		{reflect.TypeFor[[]*inner](), "list of object"},
		{reflect.TypeFor[map[string][]string](), "map of string to list of string"},
		{reflect.TypeFor[map[int]bool](), "map of string to bool"},
		{reflect.TypeFor[*time.Time](), "string (time)"},
		{reflect.TypeFor[time.Duration](), "number"},
		{reflect.TypeFor[any](), "any"},
	} {
		if got := JSONType(c.t); got != c.want {
			t.Errorf("JSONType(%s) = %q, want %q", c.t, got, c.want)
		}
	}
}

// Every path evidence.Paths offers (what lint accepts) is one Expand lists.
func TestExpandCoversClaimsPaths(t *testing.T) {
	var have []string
	for _, n := range Expand("s", reflect.TypeFor[sample]()) {
		have = append(have, n.Path)
	}
	for _, p := range evidence.Paths("s", reflect.TypeFor[sample]()) {
		if !slices.Contains(have, p) {
			t.Errorf("evidence.Paths has %s, Expand does not", p)
		}
	}
}
