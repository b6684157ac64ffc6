package claims

import (
	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/claims/expect"
	"github.com/kubeproof/kubeproof/claims/probe"
	"github.com/kubeproof/kubeproof/contract/cluster"
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
	Probes []probe.Probe `json:"probes,omitempty"`
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
	// Title is a few words that name the claim for people, beside its ID:
	// CI readers show "ID: title" as the claim's test name in
	// claims-junit.xml. Optional; unlike the statement, changing it
	// renames the test (and starts a new history in CI tools).
	Title string `json:"title,omitempty"`
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
	Expect []expect.Expectation `json:"expect,omitempty"`
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
	Source *evidence.Source `json:"source,omitempty" schema:"-"`
}

// Alternative is a condition under which a claim holds.
type Alternative struct {
	// Condition is the condition in words, as the verdict names it ("with
	// anonymous authentication off").
	Condition string `json:"condition"`
	// Expect are the conditions on evidence that hold under it; all must.
	Expect []expect.Expectation `json:"expect"`
}

// Testable reports whether a cluster can check the claim (an open claim
// is testable, only not checked yet).
func (c Claim) Testable() bool { return c.NotTestable == "" }

// Checked reports whether the claim has a check: testable and not open.
func (c Claim) Checked() bool { return c.Testable() && c.Open == "" }
