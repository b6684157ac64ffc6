package evidencedoc

import (
	"testing"

	"github.com/kubeproof/kubeproof/framework/claims"
)

// TestProbeMeanings: every path of a probe's evidence, whatever observers
// and steps its file has, is explained.
func TestProbeMeanings(t *testing.T) {
	cat := &claims.Catalog{}
	if err := cat.AddFile("testdata/probes.yaml"); err != nil {
		t.Fatal(err)
	}
	doc := Build(Input{Decls: cat.ProbeEvidence(), Meanings: ProbeMeanings(cat), Catalog: cat})
	kinds := map[string]bool{}
	for _, p := range doc.Paths {
		kinds[p.Evidence] = true
		if p.Meaning == "" {
			t.Errorf("%s %s (%s) has no meaning", p.Spec, p.Path, p.Type)
		}
	}
	for _, want := range []string{"steps", "pod", "events", "api", "eps", "stored", "requests"} {
		if !kinds[want] {
			t.Errorf("no paths of evidence %s", want)
		}
	}
	if len(doc.Paths) < 100 {
		t.Errorf("%d paths: the probe's observers were not expanded", len(doc.Paths))
	}
}
