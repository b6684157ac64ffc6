package evidencedoc

import (
	"testing"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/observer"
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
	for _, want := range []string{"steps", "pod", "events", "api", "eps", "stored", "requests", "node", "gates", "podDir", "rt", "procs", "cni", "host"} {
		if !kinds[want] {
			t.Errorf("no paths of evidence %s", want)
		}
	}
	if len(doc.Paths) < 100 {
		t.Errorf("%d paths: the probe's observers were not expanded", len(doc.Paths))
	}
}

// TestEveryObserverKindExplained: every kind of observer.Kinds explains
// every path its evidence offers, even as an empty spec (the paths its
// claims file adds, an object's fields, are TestProbeMeanings').
func TestEveryObserverKindExplained(t *testing.T) {
	for _, k := range observer.Kinds {
		spec := k.New()
		m := map[string]bool{}
		spec.Explain("o", func(path, format string, args ...any) { m[path] = true })
		for _, n := range Expand("o", spec.Evidence()) {
			if !m[n.Path] {
				t.Errorf("observer kind %s: %s (%s) has no meaning", k.Key, n.Path, JSONType(n.Type))
			}
		}
	}
}
