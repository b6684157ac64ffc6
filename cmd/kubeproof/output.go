package main

import (
	"encoding/json"
	"io"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/report"
	"github.com/kubeproof/kubeproof/internal/runner"
)

// The documents -o json prints (docs/ci.md, "Output for tools"). Each names
// its shape in schemaVersion; within a version fields are only ever added.
const (
	statusSchema = "kubeproof.io/status/v1"
	dryRunSchema = "kubeproof.io/dry-run/v1"
	diffSchema   = "kubeproof.io/report-diff/v1"
	// claimShowSchema is `claims show -o json`: the claim as claims.json
	// has it, and where its spec and evidence are written.
	claimShowSchema = "kubeproof.io/claim-show/v1"
)

// addOutputFlag is kubectl's -o/--output: table (for people, the default)
// or json (for tools).
func addOutputFlag(cmd *cobra.Command, output *string) {
	cmd.Flags().StringVarP(output, "output", "o", "table", "output format: table or json")
}

// checkOutput refuses an output format the command does not print.
func checkOutput(output string) error {
	if output != "table" && output != "json" {
		return exitcode.Errorf(exitcode.Usage, "--output %q: want table or json", output)
	}
	return nil
}

// writeJSON prints v as indented JSON, as kubectl's -o json does.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// statusJSON is `kubeproof status -o json`.
type statusJSON struct {
	SchemaVersion string `json:"schemaVersion"`
	Provider      string `json:"provider"`
	Name          string `json:"name"`
	// Up: the cluster answers (the exit code is 7 when it does not).
	Up bool `json:"up"`
	// Parts are its components and what they are doing, as the table's
	// lines: part, state (e.g. running, stopped, ready), detail.
	Parts []statusPart `json:"parts"`
}

type statusPart struct {
	Part   string `json:"part"`
	State  string `json:"state"`
	Detail string `json:"detail,omitempty"`
}

func statusDoc(provider, name string, s cluster.Status) statusJSON {
	doc := statusJSON{SchemaVersion: statusSchema, Provider: provider, Name: name, Up: s.Up, Parts: []statusPart{}}
	for _, l := range s.Lines {
		doc.Parts = append(doc.Parts, statusPart{Part: l.Part, State: l.State, Detail: l.Detail})
	}
	return doc
}

// dryRunJSON is `kubeproof run --dry-run -o json`.
type dryRunJSON struct {
	SchemaVersion string `json:"schemaVersion"`
	// Total is how many specs the binary has; Specs are those the
	// selection would run, in the order the runner walks them.
	Total int          `json:"total"`
	Specs []dryRunSpec `json:"specs"`
}

type dryRunSpec struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	// Claims are the selected claims that name the spec.
	Claims []string `json:"claims"`
}

func dryRunDoc(run []runner.SelectedSpec, total int) dryRunJSON {
	doc := dryRunJSON{SchemaVersion: dryRunSchema, Total: total, Specs: []dryRunSpec{}}
	for _, s := range run {
		doc.Specs = append(doc.Specs, dryRunSpec{ID: s.ID, Text: s.Text, Claims: append([]string{}, s.Claims...)})
	}
	return doc
}

// diffJSON is `kubeproof report diff -o json`.
type diffJSON struct {
	SchemaVersion string `json:"schemaVersion"`
	// Runs are the report directories, in the order of each difference's
	// verdicts.
	Runs []string `json:"runs"`
	// Timing: timing claims were compared too (--timing).
	Timing bool `json:"timing"`
	// Differences are the claims whose verdict is not the same in every
	// run, by claim ID; empty when all agree (exit code 0, else 1).
	// Each has the claim's ID, its kind, and its verdict in each run (""
	// where a run did not judge it).
	Differences []report.Difference `json:"differences"`
}
