package jsonschema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The test runs in this package's directory, two below the module's root.
const root = "../.."

type testDoc struct {
	SchemaVersion string            `json:"schemaVersion"`
	Items         []testItem        `json:"items"`
	Opt           *testItem         `json:"opt,omitempty"`
	Ptr           *testItem         `json:"ptr"`
	When          time.Time         `json:"when"`
	Labels        map[string]int    `json:"labels,omitempty"`
	Raw           []byte            `json:"raw"`
	Any           json.RawMessage   `json:"any,omitempty"`
	Tree          *testTree         `json:"tree,omitempty"`
	Loaded        string            `json:"loaded" schema:"-"`
	Skipped       string            `json:"-"`
	Nested        map[string][]bool `json:"nested,omitempty"`
}

type testItem struct {
	Name string `json:"name"`
	Set  bool   `json:"set,omitempty"`
}

// testTree refers to itself: its definition must be made once.
type testTree struct {
	Children []testTree `json:"children,omitempty"`
}

// schemaFile generates the schema of v with o into a file and returns its
// path.
func schemaFile(t *testing.T, v any, o Options) string {
	t.Helper()
	data, err := Generate(root, v, o)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "schema.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// What encoding/json writes for an output, empty or full, fits its schema;
// a document that differs from the type in a const, a field, a type or a
// required field does not.
func TestOutputSchema(t *testing.T) {
	path := schemaFile(t, testDoc{}, Options{Title: "test", Consts: map[string]string{"schemaVersion": "x/v1"}})
	full := testDoc{SchemaVersion: "x/v1", Items: []testItem{{Name: "a", Set: true}}, Opt: &testItem{Name: "b"},
		Ptr: &testItem{}, When: time.Unix(0, 0).UTC(), Labels: map[string]int{"k": 1}, Raw: []byte("hi"),
		Any: json.RawMessage(`{"free": [1, "x"]}`), Tree: &testTree{Children: []testTree{{Children: []testTree{{}}}}},
		Loaded: "set by the loader", Nested: map[string][]bool{"n": {true}}}
	for name, v := range map[string]testDoc{"empty": {SchemaVersion: "x/v1"}, "full": full} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := Validate(path, data); err != nil {
			t.Errorf("%s document %s: %v", name, data, err)
		}
	}
	good := `{"schemaVersion": "x/v1", "items": [], "ptr": null, "when": "2026-01-01T00:00:00Z", "raw": "", "loaded": ""}`
	if err := Validate(path, []byte(good)); err != nil {
		t.Fatalf("%s: %v", good, err)
	}
	bad := map[string]string{
		"another version":     strings.Replace(good, `"x/v1"`, `"x/v2"`, 1),
		"a field not in Go":   strings.Replace(good, `"raw": ""`, `"raw": "", "extra": 1`, 1),
		"a required left out": strings.Replace(good, `"items": [], `, "", 1),
		"a wrong type":        strings.Replace(good, `"items": []`, `"items": [{"name": 3}]`, 1),
		"a map's value":       strings.Replace(good, `"raw": ""`, `"raw": "", "labels": {"k": "one"}`, 1),
		"deep in a tree":      strings.Replace(good, `"raw": ""`, `"raw": "", "tree": {"children": [{"children": [{"x": 1}]}]}`, 1),
		"not JSON":            "{",
	}
	for name, doc := range bad {
		if err := Validate(path, []byte(doc)); err == nil {
			t.Errorf("%s: %s validates", name, doc)
		}
	}
}

// A file people write: what the loader sets is not in it, and an empty
// list is left out, never null.
func TestInputSchema(t *testing.T) {
	path := schemaFile(t, testDoc{}, Options{Input: true})
	good := `{"schemaVersion": "x/v1", "items": [], "ptr": {"name": "p"}, "when": "2026-01-01T00:00:00Z", "raw": ""}`
	if err := Validate(path, []byte(good)); err != nil {
		t.Fatalf("%s: %v", good, err)
	}
	for name, doc := range map[string]string{
		"a field the loader sets": strings.Replace(good, `"raw": ""`, `"raw": "", "loaded": "x"`, 1),
		"a null list":             strings.Replace(good, `"items": []`, `"items": null`, 1),
	} {
		if err := Validate(path, []byte(doc)); err == nil {
			t.Errorf("%s: %s validates", name, doc)
		}
	}
}

// A const for a field the type does not have is a mistake in the caller.
func TestConstOfNoField(t *testing.T) {
	_, err := Generate(root, testItem{}, Options{Consts: map[string]string{"kind": "K"}})
	if err == nil || !strings.Contains(err.Error(), `no field "kind"`) {
		t.Errorf("err = %v, want no field \"kind\"", err)
	}
}

// Descriptions and enums come from the Go source: Options is documented in
// this package's source, and its fields with it.
func TestDescriptionsFromSource(t *testing.T) {
	data, err := Generate(root, Options{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var s Schema
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.Description, "Options say what a schema is for") {
		t.Errorf("description %q, want the doc comment of Options", s.Description)
	}
	if d := s.Properties["Title"].Description; !strings.HasPrefix(d, "Title heads the schema") {
		t.Errorf("Title's description %q, want its doc comment", d)
	}
}
