package speclink

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/claims/expect"
)

// load is the catalog of claims' test data.
func load(t *testing.T) *claims.Catalog {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := claims.Load(fstest.MapFS{"doc.yaml": {Data: data}})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func TestCheckLinks(t *testing.T) {
	cat := load(t)
	ok := []SpecInfo{{ID: "spec-a", Name: "a", ClaimLabels: []string{"X-STORED", "X-AUTH"}}, {ID: "spec-b", Name: "b", ClaimLabels: []string{"X-TIME"}}}
	if errs := CheckLinks(cat, ok); len(errs) != 0 {
		t.Fatalf("consistent links reported: %v", errs)
	}
	broken := []SpecInfo{
		{ID: "spec-a", Name: "a", ClaimLabels: []string{"X-STORED", "X-TIME"}}, // a link the catalog does not have, one it has missing
		{ID: "", Name: "no id"},   // spec-b missing, no ID
		{ID: "spec-c", Name: "c"}, // no claim names it
	}
	errs := CheckLinks(cat, broken)
	text := ""
	for _, e := range errs {
		text += e.Error() + "\n"
	}
	for _, want := range []string{"spec spec-a carries label claim:X-TIME, which the catalog does not name it for", "spec spec-a lacks label claim:X-AUTH", "no spec:<id> label", "spec spec-c (\"c\") is named by no claim", "names spec spec-b, which does not exist"} {
		if !strings.Contains(text, want) {
			t.Errorf("CheckLinks did not report %q:\n%s", want, text)
		}
	}
	if got := cat.ClaimsOf("spec-a"); !slices.Equal(got, []string{"X-STORED", "X-AUTH"}) {
		t.Errorf("ClaimsOf(spec-a) = %v", got)
	}
}

// Locate lists a claim's specs (those this binary lacks without a place)
// and the declarations of the evidence it reads, once each, in the order
// it reads them, restricted to an expectation's spec where it names one.
func TestLocate(t *testing.T) {
	raw := json.RawMessage(`true`)
	c := claims.Claim{ID: "A-B", Specs: []string{"s1", "s2", "gone"},
		Expect:      []expect.Expectation{{Evidence: "bound.ok", Equals: &raw}, {Evidence: "shared.x", Spec: "s2", Equals: &raw}},
		Conditional: []claims.Alternative{{Condition: "c", Expect: []expect.Expectation{{Evidence: "bound.other", Equals: &raw}}}},
		Context:     []string{"ctx.y"}}
	at := func(line int) evidence.Source { return evidence.Source{File: "suites/x.go", Line: line} }
	specs := []SpecInfo{{ID: "s1", Source: at(1)}, {ID: "s2", Source: at(2)}}
	decls := []evidence.EvidenceDecl{
		{Spec: "s1", Name: "bound", Source: at(10)}, {Spec: "s2", Name: "bound", Source: at(10)},
		{Spec: "s1", Name: "shared", Source: at(11)}, {Spec: "s2", Name: "shared", Source: at(12)},
		{Spec: "s1", Name: "ctx", Source: at(13)}, {Spec: "other", Name: "bound", Source: at(14)},
	}
	sp, ev := Locate(c, specs, decls)
	if len(sp) != 3 || sp[0].Source == nil || sp[0].Source.Line != 1 || sp[2].Source != nil {
		t.Errorf("specs %+v", sp)
	}
	want := []EvidencePlace{{Name: "bound", Specs: []string{"s1", "s2"}, Source: at(10)}, {Name: "shared", Specs: []string{"s2"}, Source: at(12)},
		{Name: "ctx", Specs: []string{"s1"}, Source: at(13)}}
	if !reflect.DeepEqual(ev, want) {
		t.Errorf("evidence %+v, want %+v", ev, want)
	}
}
