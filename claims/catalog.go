// Package claims is kubeproof's spine on the spec side: the claims file
// (File: a document's sentences, each with the specs that check it and
// what it expects of their evidence) and the catalog of every claim
// (Catalog: loaded, validated, and checked against the specs' declared
// evidence). Its concerns beside the file have packages of their own:
// expectations (expect), evidence and its paths (evidence), the probe
// language (probe, observer), how specs are tied to claims (speclink),
// what a spec tells the judge (record), the lines of a document
// (coverage), and the file's JSON schema (claimschema). The judge that
// turns evidence into a verdict per claim runs after the specs, in the
// CLI (internal/judge).
//
// The catalog is data (YAML files, fixtures/claims), so that users can check
// their own documents with their own claims files pointing at existing specs.
// A verdict is never written in advance: expectations say what the document
// claims, the evidence says what the cluster did, and the judge compares.
package claims

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	yaml3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/claims/probe"
)

// Catalog is every claim, by document.
type Catalog struct {
	Documents []Document
	Claims    []Claim
	// Probes are the probes of the files loaded.
	Probes []probe.LoadedProbe
	// Hints are advice on the files loaded that does not stop them loading
	// (a file without the apiVersion/kind header), one per file, for the
	// command to show.
	Hints []string
	// builtin is how many of Claims LoadAt read, before files were added:
	// an added claim whose ID is one of them is told so, as the built-in
	// catalog's, not as a mere duplicate.
	builtin int
}

// Claim returns the claim with id.
func (c *Catalog) Claim(id string) (Claim, bool) {
	for _, cl := range c.Claims {
		if cl.ID == id {
			return cl, true
		}
	}
	return Claim{}, false
}

// OfDocument returns the claims of the document whose file name starts with
// name (so "000" selects 000_9d571b7144dc736e.txt).
func (c *Catalog) OfDocument(name string) []Claim {
	var out []Claim
	for _, cl := range c.Claims {
		if strings.HasPrefix(cl.Document, name) {
			out = append(out, cl)
		}
	}
	return out
}

// Load reads every *.yaml file of fsys's root as a claims file.
func Load(fsys fs.FS) (*Catalog, error) { return LoadAt(fsys, "") }

// LoadAt is Load for a tree that is the directory dir of a repository: the
// claims' sources name their files under dir (fixtures/claims/000_....yaml).
func LoadAt(fsys fs.FS, dir string) (*Catalog, error) {
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, fmt.Errorf("list claims files: %w", err)
	}
	sort.Strings(names)
	cat := &Catalog{}
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read claims file %s: %w", name, err)
		}
		if err := cat.add(name, path.Join(dir, name), "", data); err != nil {
			return nil, err
		}
	}
	cat.builtin = len(cat.Claims)
	return cat, cat.Validate()
}

// AddFile adds a user's claims file to the catalog.
func (c *Catalog) AddFile(p string) error {
	data, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("read claims file: %w", err)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return fmt.Errorf("claims file %s: %w", p, err)
	}
	if err := c.add(path.Base(p), sourcePath(p), abs, data); err != nil {
		return err
	}
	return c.Validate()
}

// sourcePath is how reports name a user's claims file: relative to the
// working directory when it is inside it (a CI job's checkout), else as
// given.
func sourcePath(p string) string {
	if !filepath.IsAbs(p) {
		return filepath.ToSlash(filepath.Clean(p))
	}
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	rel, err := filepath.Rel(wd, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return p
	}
	return filepath.ToSlash(rel)
}

// add adds the claims file name, found at source, to the catalog; abs is
// its absolute path on this machine (empty for the embedded catalog).
func (c *Catalog) add(name, source, abs string, data []byte) error {
	// The header is read first, so that a file of another version fails on
	// its version rather than on a field this version does not know.
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return decodeError(source, data, err)
	}
	switch {
	case head.APIVersion == "" && head.Kind == "":
		// Files written before the header keep loading.
		c.Hints = append(c.Hints, fmt.Sprintf("claims file %s has no header: add `apiVersion: %s` and `kind: %s` at its top", source, APIVersion, FileKind))
	case head.APIVersion != APIVersion:
		return fmt.Errorf("claims file %s: apiVersion %q, want %s", source, head.APIVersion, APIVersion)
	case head.Kind != FileKind:
		return fmt.Errorf("claims file %s: kind %q, want %s", source, head.Kind, FileKind)
	}
	var f File
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return decodeError(source, data, err)
	}
	if f.Document.File == "" {
		return fmt.Errorf("claims file %s: document.file is empty", name)
	}
	lines, err := idLines(data)
	if err != nil {
		return fmt.Errorf("claims file %s: %w", name, err)
	}
	c.Documents = append(c.Documents, f.Document)
	for i, cl := range f.Claims {
		if cl.Source != nil {
			return fmt.Errorf("claims file %s: claim %s: source is set by kubeproof, not written in a claims file", name, cl.ID)
		}
		cl.Document = f.Document.File
		if i < len(lines) {
			cl.Source = &evidence.Source{File: source, Line: lines[i]}
		}
		c.Claims = append(c.Claims, cl)
	}
	for _, p := range f.Probes {
		c.Probes = append(c.Probes, probe.LoadedProbe{Probe: p, Document: f.Document.File, File: source, Path: abs})
	}
	return nil
}

// idLines returns, for each entry of a claims file's claims list in order,
// the line of its id (of the entry itself when it has none).
func idLines(data []byte) ([]int, error) {
	var doc yaml3.Node
	if err := yaml3.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	var lines []int
	for _, item := range claimEntries(&doc) {
		line := item.Line
		for j := 0; item.Kind == yaml3.MappingNode && j+1 < len(item.Content); j += 2 {
			if item.Content[j].Value == "id" {
				line = item.Content[j].Line
			}
		}
		lines = append(lines, line)
	}
	return lines, nil
}

// SpecIDs returns the spec IDs the claims name, sorted, without duplicates.
func SpecIDs(cs []Claim) []string {
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.Specs...)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// ClaimsOf returns the IDs of the claims that name spec, in catalog order.
func (c *Catalog) ClaimsOf(spec string) []string {
	var out []string
	for _, cl := range c.Claims {
		if slices.Contains(cl.Specs, spec) {
			out = append(out, cl.ID)
		}
	}
	return out
}
