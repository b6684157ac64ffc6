package observer

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// Every kind has a key of its own and a spec type of its own, whose
// evidence type is made without a claims file's fields too; docs/probes.md
// lists each, as its author reads them.
func TestKinds(t *testing.T) {
	doc, err := os.ReadFile("../../docs/probes.md")
	if err != nil {
		t.Fatal(err)
	}
	keys, types := map[string]bool{}, map[reflect.Type]bool{}
	for _, k := range Kinds {
		spec := k.New()
		typ := reflect.TypeOf(spec)
		if keys[k.Key] || types[typ] {
			t.Errorf("kind %s: its key or its spec type %s is another kind's", k.Key, typ)
		}
		keys[k.Key], types[typ] = true, true
		if spec.Evidence() == nil {
			t.Errorf("kind %s: no evidence type", k.Key)
		}
		if got, ok := kindOf(spec); !ok || got.Key != k.Key {
			t.Errorf("kind %s: its spec is of kind %v", k.Key, got.Key)
		}
		if !strings.Contains(string(doc), "| `"+k.Key+": {") {
			t.Errorf("docs/probes.md lists no observer %s in its table of observers", k.Key)
		}
	}
}
