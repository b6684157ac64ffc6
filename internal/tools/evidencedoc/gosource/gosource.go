// Package gosource reads what the suites' Go source says about their
// evidence: what each path means (the doc comment above a DeclareEvidence
// call, or its var, or the evidence type's, for the evidence itself; each
// struct field's for the paths below it), as package sourcedoc reads the
// source. go generate runs it (../gen) into source.json, which the binary
// embeds, since the binary carries no source; a test fails when that file,
// or docs/evidence.md, is not what it makes now.
package gosource

import (
	"path"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/claims/speclink"
	"github.com/kubeproof/kubeproof/internal/sourcedoc"
	"github.com/kubeproof/kubeproof/internal/tools/evidencedoc"
)

const module = "github.com/kubeproof/kubeproof"

// Generate returns the two generated files: source.json (the meanings of
// decls' paths, read from the source under root) and docs/evidence.md
// (decls explained with those, the requires: of cat's claims, and the
// specs' texts and the needs they declare).
func Generate(root string, decls []evidence.EvidenceDecl, cat *claims.Catalog, specs []speclink.SpecInfo) (source, markdown []byte, err error) {
	m, err := Meanings(root, decls)
	if err != nil {
		return nil, nil, err
	}
	needs := evidencedoc.NeedsOf(specs)
	source, err = evidencedoc.EncodeSource(evidencedoc.Source{Meanings: m})
	if err != nil {
		return nil, nil, err
	}
	names := map[string]string{}
	for _, s := range specs {
		names[s.ID] = s.Name
	}
	doc := evidencedoc.Build(evidencedoc.Input{Decls: decls, Meanings: m, SpecNeeds: needs, Catalog: cat})
	return source, evidencedoc.Markdown(doc, names), nil
}

// Meanings reads the meaning of every path of decls from the Go source
// under root (the repository's root). A path whose declaration has no doc
// comment is left out.
func Meanings(root string, decls []evidence.EvidenceDecl) (evidencedoc.Meanings, error) {
	src := sourcedoc.New(root, module)
	for _, d := range decls {
		if err := src.ReadDir(path.Dir(d.Source.File)); err != nil {
			return nil, err
		}
		if err := src.ReadTypes(d.Type); err != nil {
			return nil, err
		}
	}
	out := evidencedoc.Meanings{}
	for _, d := range decls {
		if out[d.Spec] == nil {
			out[d.Spec] = map[string]evidencedoc.Meaning{}
		}
		for _, n := range evidencedoc.Expand(d.Name, d.Type) {
			if m, ok := meaning(src, d, n); ok {
				out[d.Spec][n.Path] = m
			}
		}
	}
	return out, nil
}

// meaning is n's: a field's doc comment, else (for an object or the
// evidence itself) its type's; the evidence itself first its declaration's.
func meaning(src *sourcedoc.Source, d evidence.EvidenceDecl, n evidencedoc.Node) (evidencedoc.Meaning, bool) {
	if n.Path == d.Name {
		for _, v := range src.Vars[d.Source.File] {
			if v.From <= d.Source.Line && d.Source.Line <= v.To && v.Text != "" {
				return evidencedoc.Meaning{Text: v.Text, From: v.What}, true
			}
		}
	} else if f, ok := src.Fields[n.DocKey]; ok && f.Text != "" {
		return evidencedoc.Meaning{Text: f.Text, From: f.What}, true
	}
	if n.DocKey == "" && n.Path != d.Name {
		return evidencedoc.Meaning{}, false // a list element or map value
	}
	if t, ok := src.Types[sourcedoc.Key(n.Type)]; ok && n.Type.Name() != "" && t.Text != "" {
		return evidencedoc.Meaning{Text: t.Text, From: t.What}, true
	}
	return evidencedoc.Meaning{}, false
}
