package sourcedoc

import (
	"reflect"
	"slices"
	"testing"
)

// TestReadDir: types, fields (a trailing comment, one comment for a
// block of fields that names them, an anonymous struct's), package vars
// with their lines, and typed string constants.
func TestReadDir(t *testing.T) {
	s := New("testdata", "example.com/m")
	if err := s.ReadDir("pets"); err != nil {
		t.Fatal(err)
	}
	const p = "example.com/m/pets."
	for key, want := range map[string]Doc{
		p + "Pet":           {"Pet is an animal someone keeps.", "type pets.Pet"},
		p + "Kind":          {"Kind is a kind of pet.", "type pets.Kind"},
		p + "Pet.Name":      {"Name is what it answers to.", "field pets.Pet.Name"},
		p + "Pet.Kind":      {"Kind says what it is.", "field pets.Pet.Kind"},
		p + "Pet.Age":       {"Age and Weight, in years and kilograms.", "field pets.Pet.Age"},
		p + "Pet.Weight":    {"Age and Weight, in years and kilograms.", "field pets.Pet.Weight"},
		p + "Pet.Vet.Phone": {"Phone is the vet's number.", "field pets.Pet.Vet.Phone"},
	} {
		got, ok := s.Types[key]
		if !ok {
			got = s.Fields[key]
		}
		if got != want {
			t.Errorf("%s: %+v, want %+v", key, got, want)
		}
	}
	if got := s.Enums[p+"Kind"]; !slices.Equal(got, []string{"cat", "dog"}) {
		t.Errorf("enum Kind: %v", got)
	}
	if len(s.Enums) != 1 {
		t.Errorf("enums %v: an untyped constant is none", s.Enums)
	}
	want := []Var{
		{Doc{"fido is a dog, declared over two lines.", "declaration pets.fido"}, 34, 36},
		{Doc{"rex has a trailing comment.", "declaration pets.rex"}, 38, 38},
	}
	if got := s.Vars["pets/pets.go"]; !reflect.DeepEqual(got, want) {
		t.Errorf("vars %+v, want %+v", got, want)
	}
	if err := s.ReadDir("nowhere"); err == nil {
		t.Error("a directory that is not there: no error")
	}
}

// OneOfType decodes one of its keys itself.
type OneOfType struct{}

func (OneOfType) OneOf() []reflect.StructField {
	return []reflect.StructField{{Name: "K_doc", Type: reflect.TypeFor[Doc](), Index: []int{0}}}
}

// TestReadTypes reads the packages of a type and of the types it holds,
// those a OneOf method lists too, and no package outside the module.
func TestReadTypes(t *testing.T) {
	s := New("../..", "github.com/kubeproof/kubeproof")
	if err := s.ReadTypes(reflect.TypeFor[map[string][]*Var]()); err != nil {
		t.Fatal(err)
	}
	const p = "github.com/kubeproof/kubeproof/internal/sourcedoc."
	if got := s.Types[Key(reflect.TypeFor[Var]())].What; got != "type sourcedoc.Var" {
		t.Errorf("Var: %q", got)
	}
	if got := s.Fields[p+"Source.Vars"].Text; got != "Vars are by file, slash-separated from the module's root." {
		t.Errorf("Source.Vars: %q", got)
	}
	if got := OneOf(reflect.TypeFor[OneOfType]()); len(got) != 1 || got[0].Type != reflect.TypeFor[Doc]() {
		t.Errorf("OneOf: %v", got)
	}
	if got := Key(reflect.TypeFor[Var](), "Doc", "Text"); got != p+"Var.Doc.Text" {
		t.Errorf("Key: %s", got)
	}
}
