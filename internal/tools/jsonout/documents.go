// Package jsonout is kubeproof's machine output as an API: the documents
// the commands print with -o json, and the list of every JSON document
// kubeproof writes (Outputs), each named by its schemaVersion, with its
// JSON Schema generated from its Go type into schemas/output (go generate
// ./internal/tools/jsonout; a test holds the shipped files to it).
package jsonout

import (
	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/speclink"
	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/report"
	"github.com/kubeproof/kubeproof/internal/runner"
)

// The schemaVersions of the -o json documents this package holds.
const (
	StatusSchema    = "kubeproof.io/status/v1"
	DryRunSchema    = "kubeproof.io/dry-run/v1"
	DiffSchema      = "kubeproof.io/report-diff/v1"
	ClaimShowSchema = "kubeproof.io/claim-show/v1"
	ClaimListSchema = "kubeproof.io/claim-list/v1"
)

// Status is `kubeproof status -o json`.
type Status struct {
	// SchemaVersion names this document's shape; within a version fields
	// are only added.
	SchemaVersion string `json:"schemaVersion"`
	// Provider and Name are the cluster's, as the flags named it.
	Provider string `json:"provider"`
	Name     string `json:"name"`
	// Up: the cluster answers (the exit code is 7 when it does not).
	Up bool `json:"up"`
	// Parts are its components and what they are doing, as the table's
	// lines: part, state (e.g. running, stopped, ready), detail.
	Parts []StatusPart `json:"parts"`
}

// StatusPart is one line of the status table.
type StatusPart struct {
	Part   string `json:"part"`
	State  string `json:"state"`
	Detail string `json:"detail,omitempty"`
}

// NewStatus is the status document of the cluster provider and name name.
func NewStatus(provider, name string, s cluster.Status) Status {
	doc := Status{SchemaVersion: StatusSchema, Provider: provider, Name: name, Up: s.Up, Parts: []StatusPart{}}
	for _, l := range s.Lines {
		doc.Parts = append(doc.Parts, StatusPart{Part: l.Part, State: l.State, Detail: l.Detail})
	}
	return doc
}

// DryRun is `kubeproof run --dry-run -o json`.
type DryRun struct {
	// SchemaVersion names this document's shape; within a version fields
	// are only added.
	SchemaVersion string `json:"schemaVersion"`
	// Total is how many specs the binary has; Specs are those the
	// selection would run, in the order the runner walks them.
	Total int          `json:"total"`
	Specs []DryRunSpec `json:"specs"`
}

// DryRunSpec is a spec the selection would run.
type DryRunSpec struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	// Claims are the selected claims that name the spec.
	Claims []string `json:"claims"`
}

// NewDryRun is the dry run's document of the specs run would run, of
// total.
func NewDryRun(run []runner.SelectedSpec, total int) DryRun {
	doc := DryRun{SchemaVersion: DryRunSchema, Total: total, Specs: []DryRunSpec{}}
	for _, s := range run {
		doc.Specs = append(doc.Specs, DryRunSpec{ID: s.ID, Text: s.Text, Claims: append([]string{}, s.Claims...)})
	}
	return doc
}

// Diff is `kubeproof report diff -o json`.
type Diff struct {
	// SchemaVersion names this document's shape; within a version fields
	// are only added.
	SchemaVersion string `json:"schemaVersion"`
	// Runs are the report directories, in the order of each difference's
	// verdicts.
	Runs []string `json:"runs"`
	// Timing: timing claims were compared too (--timing).
	Timing bool `json:"timing"`
	// IgnoreNotRun: each claim was compared only among the runs that ran
	// its specs (--ignore-not-run).
	IgnoreNotRun bool `json:"ignoreNotRun,omitempty"`
	// Differences are the claims whose verdict is not the same in every
	// run, by claim ID; empty when all agree (exit code 0, else 1).
	// Each has the claim's ID, its kind, and its verdict in each run (""
	// where a run did not judge it).
	Differences []report.Difference `json:"differences"`
}

// NewDiff is the document of the differences between the runs of dirs.
func NewDiff(dirs []string, opts report.DiffOptions, diffs []report.Difference) Diff {
	return Diff{SchemaVersion: DiffSchema, Runs: dirs, Timing: opts.Timing, IgnoreNotRun: opts.IgnoreNotRun, Differences: append([]report.Difference{}, diffs...)}
}

// ClaimShow is `kubeproof claims show ID -o json`: the claim as claims.json
// has it, and where its specs and the evidence it reads are written.
type ClaimShow struct {
	// SchemaVersion names this document's shape; within a version fields
	// are only added.
	SchemaVersion string                   `json:"schemaVersion"`
	Claim         claims.Claim             `json:"claim"`
	Specs         []speclink.SpecPlace     `json:"specs,omitempty"`
	Evidence      []speclink.EvidencePlace `json:"evidence,omitempty"`
}

// ClaimList is `kubeproof claims list -o json`: the selected claims.
type ClaimList struct {
	// SchemaVersion names this document's shape; within a version fields
	// are only added.
	SchemaVersion string `json:"schemaVersion"`
	// Claims are the selected claims (the catalog's, or --claims-file's),
	// in the catalog's order.
	Claims []claims.Claim `json:"claims"`
}

// NewClaimList is the list document of cs.
func NewClaimList(cs []claims.Claim) ClaimList {
	return ClaimList{SchemaVersion: ClaimListSchema, Claims: append([]claims.Claim{}, cs...)}
}
