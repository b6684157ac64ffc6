package jsonout

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The test runs in this package's directory, three below the root.
const root = "../../.."

// Every output's shipped schema is the one its Go type generates, names
// its schemaVersion as the one value of that field, and no schema is
// shipped for an output that is no more.
func TestShippedSchemasAreGenerated(t *testing.T) {
	var want []string
	versions := map[string]bool{}
	for _, o := range Outputs {
		if versions[o.Version] {
			t.Errorf("%s is listed twice", o.Version)
		}
		versions[o.Version] = true
		want = append(want, filepath.Base(o.File()))
		gen, err := o.Schema(root)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(root, o.File()))
		if err != nil {
			t.Errorf("%s: %v (go generate ./internal/tools/jsonout)", o.Version, err)
			continue
		}
		if !bytes.Equal(got, gen) {
			t.Errorf("%s is not the schema of %T: run go generate ./internal/tools/jsonout", o.File(), o.Type)
		}
		if !bytes.Contains(got, []byte(`"const": "`+o.Version+`"`)) {
			t.Errorf("%s does not hold schemaVersion to %s", o.File(), o.Version)
		}
	}
	files, err := filepath.Glob(filepath.Join(root, SchemaDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, filepath.Base(f))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s holds %v, want %v", SchemaDir, got, want)
	}
}
