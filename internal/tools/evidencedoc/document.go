package evidencedoc

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/contract/cluster"
)

// Schema names the shape of `kubeproof claims specs --evidence -o json`
// (docs/ci.md); within a version fields are only ever added.
const Schema = "kubeproof.io/evidence/v1"

// Document is the evidence catalog: every path of every declared piece of
// evidence, explained.
type Document struct {
	SchemaVersion string `json:"schemaVersion"`
	// ReportDir is the run whose evidence the examples are from, if any.
	ReportDir string `json:"reportDir,omitempty"`
	Paths     []Path `json:"paths"`
}

// Path is one evidence path of one spec.
type Path struct {
	Spec string `json:"spec"`
	// Path is what a claim's expect: names: the evidence name, then JSON
	// field names, 0 for list elements, {key} for map keys.
	Path     string `json:"path"`
	Evidence string `json:"evidence"`
	// Type is the JSON type at the path: string, number, bool, list of X,
	// map of string to X, object (or any).
	Type string `json:"type"`
	// Meaning is the doc comment of the path's Go declaration, "" where
	// none is written; MeaningFrom names that declaration.
	Meaning     string `json:"meaning"`
	MeaningFrom string `json:"meaningFrom,omitempty"`
	// SpecRequires are the capabilities the recording spec declares it
	// requires (it is skipped without them); SpecUses those it asks for
	// and does without, recording less. Both are read from the spec's
	// source, for the spec as a whole: not what this path needs.
	SpecRequires []cluster.Capability `json:"specRequires"`
	SpecUses     []cluster.Capability `json:"specUses"`
	// Claims are the built-in claims that read the path, the object that
	// holds it, or a path within it; ClaimsRequire is the union of their
	// requires: (the capabilities without which they are not checkable).
	// They say what the claims need, not what the spec needs to record
	// the path.
	Claims        []string             `json:"claims"`
	ClaimsRequire []cluster.Capability `json:"claimsRequire"`
	// Source is where the evidence is declared in the Go source.
	Source evidence.Source `json:"source"`
	// Example is the value a run recorded at the path (a list whole),
	// with --report-dir; left out when the run has none.
	Example json.RawMessage `json:"example,omitempty"`
}

// Input is what a catalog is built from.
type Input struct {
	// Decls are the declared evidence (framework.DeclaredEvidence, and
	// whatever else declares evidence.EvidenceDecl).
	Decls    []evidence.EvidenceDecl
	Meanings Meanings
	// SpecNeeds are the capabilities each spec declares (NeedsOf), by
	// spec ID; a spec without an entry shows none.
	SpecNeeds map[string]SpecNeeds
	// Catalog is the claims whose reads and requires: are shown; nil for
	// none.
	Catalog *claims.Catalog
	// Examples are a run's recorded evidence; nil for none.
	Examples Examples
	// ReportDir is where Examples were read, for the document to say.
	ReportDir string
}

// Build explains every path of in.Decls, sorted by spec and path.
func Build(in Input) Document {
	doc := Document{SchemaVersion: Schema, ReportDir: in.ReportDir, Paths: []Path{}}
	reads := claimReads(in.Catalog)
	for _, d := range in.Decls {
		for _, n := range Expand(d.Name, d.Type) {
			p := Path{Spec: d.Spec, Path: n.Path, Evidence: d.Name, Type: JSONType(n.Type), Source: d.Source,
				Claims: []string{}, ClaimsRequire: []cluster.Capability{},
				SpecRequires: orEmpty(in.SpecNeeds[d.Spec].Requires), SpecUses: orEmpty(in.SpecNeeds[d.Spec].Uses)}
			if m, ok := in.Meanings[d.Spec][n.Path]; ok {
				p.Meaning, p.MeaningFrom = m.Text, m.From
			}
			for _, r := range reads[d.Spec] {
				if !overlap(n.Path, r.path) {
					continue
				}
				if !slices.Contains(p.Claims, r.claim) {
					p.Claims = append(p.Claims, r.claim)
				}
				for _, c := range r.requires {
					if !slices.Contains(p.ClaimsRequire, c) {
						p.ClaimsRequire = append(p.ClaimsRequire, c)
					}
				}
			}
			slices.Sort(p.Claims)
			slices.Sort(p.ClaimsRequire)
			if v, ok := in.Examples.At(d.Spec, n.Path); ok {
				if b, err := json.Marshal(v); err == nil {
					p.Example = b
				}
			}
			doc.Paths = append(doc.Paths, p)
		}
	}
	slices.SortStableFunc(doc.Paths, func(a, b Path) int {
		return cmp.Or(strings.Compare(a.Spec, b.Spec), strings.Compare(a.Path, b.Path))
	})
	return doc
}

// orEmpty is cs, or an empty list for JSON's [] instead of null.
func orEmpty(cs []cluster.Capability) []cluster.Capability {
	if cs == nil {
		return []cluster.Capability{}
	}
	return slices.Clone(cs)
}

// read is an evidence path a claim reads from a spec.
type read struct {
	path, claim string
	requires    []cluster.Capability
}

// claimReads lists, by spec, the paths cat's claims read: their
// expectations (conditional ones too) and context.
func claimReads(cat *claims.Catalog) map[string][]read {
	out := map[string][]read{}
	if cat == nil {
		return out
	}
	for _, c := range claims.WithReadings(cat.Claims) {
		add := func(path, spec string) {
			for _, s := range c.Specs {
				if spec == "" || spec == s {
					out[s] = append(out[s], read{path: path, claim: c.ID, requires: c.Requires})
				}
			}
		}
		for _, e := range c.Expect {
			add(e.Evidence, e.Spec)
		}
		for _, alt := range c.Conditional {
			for _, e := range alt.Expect {
				add(e.Evidence, e.Spec)
			}
		}
		for _, p := range c.Context {
			add(p, "")
		}
	}
	return out
}

// overlap reports whether a claim reading path r reads what path p is,
// part of it, or the object holding it: one is a prefix of the other, p's
// 0 matching any index and {key} any key.
func overlap(p, r string) bool {
	ps, rs := strings.Split(p, "."), strings.Split(r, ".")
	for i := range min(len(ps), len(rs)) {
		switch {
		case ps[i] == rs[i], ps[i] == "{key}":
		case ps[i] == "0" && isIndex(rs[i]):
		default:
			return false
		}
	}
	return true
}

func isIndex(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}
