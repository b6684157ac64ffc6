// Package claims is kubeproof's spine on the spec side: the catalog of
// documented sentences (claims), the specs that check each one, and the
// names under which specs record what they observed (their evidence). The
// judge that turns evidence into a verdict per claim runs after the specs,
// in the CLI (internal/judge).
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
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	yaml3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/framework/cluster"
)

// Kind says what sort of sentence a claim is.
type Kind string

const (
	Behaviour  Kind = "behaviour"
	StatusCode Kind = "status-code"
	Structure  Kind = "structure"
	Timing     Kind = "timing"
)

var kinds = []Kind{Behaviour, StatusCode, Structure, Timing}

// APIVersion and FileKind head every claims file (apiVersion, kind), so
// that a reader, an editor and the loader know which schema the file is
// written against before reading it; a later version can change the
// schema without guessing from the fields present.
const (
	APIVersion = "kubeproof.io/v1alpha1"
	FileKind   = "Claims"
)

// File is one claims file: the claims of one document.
type File struct {
	// APIVersion is the version of the claims schema the file is written
	// against: kubeproof.io/v1alpha1.
	APIVersion string `json:"apiVersion"`
	// Kind is what the file holds: Claims.
	Kind string `json:"kind"`
	// Document is the document whose sentences the claims are.
	Document Document `json:"document"`
	// Claims are the document's sentences, each with how a cluster checks
	// it (or why none can).
	Claims []Claim `json:"claims"`
	// Probes are specs written in the file: claims name them in specs:
	// as they name built-in specs.
	Probes []Probe `json:"probes,omitempty"`
}

// Document names the document the claims come from.
type Document struct {
	// File is the document's file name (e.g. 000_9d571b7144dc736e.txt).
	File string `json:"file"`
	// Title is the document's title, as the reports name it.
	Title string `json:"title"`
	// Language of the quotes (e.g. ko).
	Language string `json:"language,omitempty"`
	// URL is where a reader finds the document (shown in the reports).
	URL string `json:"url,omitempty"`
	// Environment is where the document's numbers were measured, as the
	// document names it (its Kubernetes distribution, release, cluster
	// size); the reports show it beside each timing claim's measurement.
	Environment string `json:"environment,omitempty"`
}

// Claim is one testable (or explicitly untestable) sentence of a document.
type Claim struct {
	// ID names the claim everywhere (run --claims, the reports): upper-case
	// letters, digits and dashes, unique in the catalog, by convention
	// starting with the document's prefix (000-BINDING-OBJECT).
	ID string `json:"id"`
	// Document is filled from the file's document (never written in one).
	Document string `json:"document" schema:"-"`
	// Section is the heading of the document the sentence is under.
	Section string `json:"section"`
	// Quote is the sentence in the document's language, as written.
	Quote string `json:"quote"`
	// Condensed: the quote joins verbatim fragments of the document (from a
	// diagram, a code block or sentences apart) with " … ".
	Condensed bool `json:"condensed,omitempty"`
	// Statement is what the sentence claims, in English.
	Statement string `json:"statement"`
	// Component is the Kubernetes component the sentence is about
	// (kube-scheduler, kubelet; several comma-separated).
	Component string `json:"component"`
	// Kind says what sort of sentence the claim is; a timing claim is
	// judged as a measurement (within, faster, slower).
	Kind Kind `json:"kind"`
	// Specs are the IDs of the specs that check the claim (their label
	// spec:<id>).
	Specs []string `json:"specs,omitempty"`
	// Requires are capabilities the check needs; without them the verdict is
	// "not checkable here".
	Requires []cluster.Capability `json:"requires,omitempty"`
	// Expect is what the document says, as conditions on evidence. All must
	// hold for "confirmed".
	Expect []Expectation `json:"expect,omitempty"`
	// Conditional lists conditions under which the claim holds when Expect
	// does not: the verdict is then "conditional" with that condition.
	Conditional []Alternative `json:"conditional,omitempty"`
	// Readings are other ways to decide the claim, tried in order where the
	// cluster lacks a capability its own needs (Reading).
	Readings []Reading `json:"readings,omitempty"`
	// Context are evidence paths shown beside the verdict to explain it,
	// without deciding it.
	Context []string `json:"context,omitempty"`
	// Claimed is the document's number for timing claims, as written.
	// Timing claims are measurements: their verdict says whether the
	// value measured here is within, below or above the range an atLeast/
	// atMost expectation takes the number as, or that withinClaimed reads
	// from it (a range as written, one number n as [n/2, 1.5n]).
	Claimed string `json:"claimed,omitempty"`
	// NotTestable, if set, is why no cluster can test the sentence
	// (history, opinion, advice).
	NotTestable string `json:"notTestable,omitempty"`
	// Open, if set, says what check is missing for a sentence a cluster
	// could test but no spec checks yet; its verdict is "open", never "not
	// testable". An open claim names no specs and no expectations.
	Open string `json:"open,omitempty"`
	// Note says how the sentence is read where that is not obvious: the
	// mechanism behind an effect the claim confirms, or why a refutation
	// stands (what the cluster does instead, and where Kubernetes says so).
	Note string `json:"note,omitempty"`
	// DiffersFrom names the claims that read some of the same evidence
	// with the same expectation as this one and still read a failure of it
	// otherwise (one refuted where the other is conditional), each with the
	// reason, for a reviewer: without it the catalog's consistency check
	// (CheckConsistency) fails, since one fact gets one verdict.
	DiffersFrom []Difference `json:"differsFrom,omitempty"`
	// FlipsUnder names the settings under which the claim takes another
	// verdict than on a default cluster: each a fault of kubeproof's fault
	// matrix (fixtures/faults.yaml, run by `kubeproof faults`) that lists
	// the claim with that verdict. The reports show it beside the verdict.
	FlipsUnder []Flip `json:"flipsUnder,omitempty"`
	// Source is where the claim is written: its claims file and the line
	// of its id, for reports that point readers at it (claims-junit.xml's
	// file and line). Set when the file is loaded, never written in one.
	Source *Source `json:"source,omitempty" schema:"-"`
}

// Source is a place in a claims file, or in the Go source of a spec or an
// evidence declaration.
type Source struct {
	// File is the file's path as a reader finds it: relative to the
	// repository for the built-in catalog (fixtures/claims/...) and the Go
	// source (suites/...), as given (relative to the working directory
	// where it is inside it) for a user's claims file.
	File string `json:"file"`
	// Line is the 1-based line (in a claims file, of the claim's id).
	Line int `json:"line"`
}

// Alternative is a condition under which a claim holds.
type Alternative struct {
	// Condition is the condition in words, as the verdict names it ("with
	// anonymous authentication off").
	Condition string `json:"condition"`
	// Expect are the conditions on evidence that hold under it; all must.
	Expect []Expectation `json:"expect"`
}

// Testable reports whether a cluster can check the claim (an open claim
// is testable, only not checked yet).
func (c Claim) Testable() bool { return c.NotTestable == "" }

// Checked reports whether the claim has a check: testable and not open.
func (c Claim) Checked() bool { return c.Testable() && c.Open == "" }

// Catalog is every claim, by document.
type Catalog struct {
	Documents []Document
	Claims    []Claim
	// Probes are the probes of the files loaded.
	Probes []LoadedProbe
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
			cl.Source = &Source{File: source, Line: lines[i]}
		}
		c.Claims = append(c.Claims, cl)
	}
	for _, p := range f.Probes {
		c.Probes = append(c.Probes, LoadedProbe{Probe: p, Document: f.Document.File, File: source, Path: abs})
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

var (
	idRE   = regexp.MustCompile(`^[A-Z0-9][A-Z0-9-]*[A-Z0-9]$`)
	specRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*[a-z0-9]$`)
)

// Validate checks the catalog's shape: unique IDs, every field a verdict
// needs, and expectations the judge can evaluate. Whether the named specs
// exist is checked against the suites (see suites' catalog test).
func (c *Catalog) Validate() error {
	var errs []string
	seen := map[string]int{}
	for i, cl := range c.Claims {
		bad := func(format string, args ...any) {
			errs = append(errs, at(cl.Source)+fmt.Sprintf("claim %s (%s): %s", cl.ID, cl.Document, fmt.Sprintf(format, args...)))
		}
		if !idRE.MatchString(cl.ID) {
			bad("ID must be upper-case letters, digits and dashes")
		}
		if first, ok := seen[cl.ID]; ok {
			bad("%s", c.clash(first, i))
		} else {
			seen[cl.ID] = i
		}
		if cl.Section == "" || cl.Quote == "" || cl.Statement == "" || cl.Component == "" {
			bad("section, quote, statement and component are all required")
		}
		if !slices.Contains(kinds, cl.Kind) {
			bad("kind %q is not one of %v", cl.Kind, kinds)
		}
		if cl.Open != "" {
			if cl.NotTestable != "" {
				bad("open and notTestable exclude each other: a sentence is testable with no check yet (open) or no cluster can test it (notTestable)")
			}
			if len(cl.Specs) > 0 || len(cl.Expect) > 0 || len(cl.Conditional) > 0 || cl.relates() {
				bad("an open claim names no specs, expectations, differsFrom or flipsUnder: open says what check is missing")
			}
			continue
		}
		if !cl.Testable() {
			if len(cl.Specs) > 0 || len(cl.Expect) > 0 || cl.relates() {
				bad("a claim marked not testable names no specs, expectations, differsFrom or flipsUnder")
			}
			continue
		}
		if len(cl.Specs) == 0 {
			bad("names no spec (mark it notTestable with the reason if no cluster can test it)")
		}
		for _, r := range cl.Requires {
			if !slices.Contains(cluster.Capabilities, r) {
				bad("requires %q, which is not a capability (%v)", r, cluster.Capabilities)
			}
		}
		for _, s := range cl.Specs {
			if !specRE.MatchString(s) {
				bad("spec ID %q must be lower-case letters, digits and dashes", s)
			}
		}
		if len(cl.Expect) == 0 {
			bad("has no expectations: the judge could only confirm it in advance")
		}
		for _, e := range cl.Expect {
			if err := e.validate(); err != nil {
				bad("%v", err)
			}
		}
		if cl.Kind == Timing && (cl.Claimed == "" || !slices.ContainsFunc(cl.Expect, Expectation.ranged)) {
			bad("a timing claim gives the document's number (claimed) and the range it is taken as (an expectation with atLeast/atMost, or withinClaimed); a claim about an order or the slowest step is a behaviour claim")
		}
		if cl.usesClaimed() {
			if _, err := ParseClaimed(cl.Claimed); err != nil {
				bad("withinClaimed: %v", err)
			}
		}
		for _, err := range cl.validateRelations() {
			bad("%v", err)
		}
		for _, b := range cl.validateReadings() {
			bad("%s", b)
		}
		for _, alt := range cl.Conditional {
			if alt.Condition == "" || len(alt.Expect) == 0 {
				bad("a conditional alternative needs a condition and expectations")
			}
			for _, e := range alt.Expect {
				if err := e.validate(); err != nil {
					bad("%v", err)
				}
			}
		}
	}
	errs = append(errs, c.checkDifferences()...)
	probes := map[string]bool{}
	for _, p := range c.Probes {
		if probes[p.ID] {
			errs = append(errs, fmt.Sprintf("probe %s (%s): the ID is used twice", p.ID, p.Document))
		}
		probes[p.ID] = true
		errs = append(errs, p.validate()...)
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid claims catalog:\n  %s", strings.Join(errs, "\n  "))
	}
	return nil
}

// clash says why claim i's ID, already claim first's, cannot be used: a
// claim of the built-in catalog, or another claim, and where that one is.
func (c *Catalog) clash(first, i int) string {
	other := c.Claims[first]
	where := other.Document
	if other.Source != nil {
		where += ", " + other.Source.File + ":" + strconv.Itoa(other.Source.Line)
	}
	if first < c.builtin && i >= c.builtin {
		return fmt.Sprintf("the ID is already a claim of the built-in catalog (%s): choose another", where)
	}
	return fmt.Sprintf("duplicate ID: also the ID of the claim at %s", where)
}

// at prefixes a message with a place in a claims file ("f.yaml:12: "),
// when the place is known.
func at(src *Source) string {
	if src == nil {
		return ""
	}
	return fmt.Sprintf("%s:%d: ", src.File, src.Line)
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
