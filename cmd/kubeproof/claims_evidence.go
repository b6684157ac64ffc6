package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/tools/evidencedoc"
)

// evidenceFlags are `claims specs --evidence`'s: the evidence catalog
// (package evidencedoc), for people or, with -o json, for tools.
type evidenceFlags struct {
	on         bool
	reportDir  string
	output     string
	claimsFile string
}

func (e *evidenceFlags) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&e.on, "evidence", false, "list every evidence path each spec records (what a claims file's expect: names): its type, meaning, and the capabilities its spec and the claims that read it require")
	f.StringVar(&e.reportDir, "report-dir", "", "with --evidence: a run's report directory, for the value each path had")
	f.StringVar(&e.claimsFile, "claims-file", "", "your claims file: its probes are listed as specs, with their evidence")
	addOutputFlag(cmd, &e.output)
}

// catalog is the built-in catalog, with the user's claims file if given.
func (e *evidenceFlags) catalog() (*claims.Catalog, error) {
	cat, err := claims.LoadAt(fixtures.Claims(), fixtures.ClaimsDir)
	if err != nil {
		return nil, exitcode.With(exitcode.Internal, err)
	}
	if e.claimsFile != "" {
		if err := cat.AddFile(e.claimsFile); err != nil {
			return nil, exitcode.With(exitcode.Usage, fmt.Errorf("--claims-file: %w", err))
		}
	}
	return cat, nil
}

// print writes the evidence catalog of this binary's specs.
func (e *evidenceFlags) print(w io.Writer) error {
	if err := checkOutput(e.output); err != nil {
		return err
	}
	if !e.on {
		return exitcode.Errorf(exitcode.Usage, "--output %s is for --evidence", e.output)
	}
	doc, err := e.build()
	if err != nil {
		return err
	}
	if e.output == "json" {
		return writeJSON(w, doc)
	}
	return evidencedoc.WriteTable(w, doc)
}

func (e *evidenceFlags) build() (evidencedoc.Document, error) {
	src, err := evidencedoc.Builtin()
	if err != nil {
		return evidencedoc.Document{}, err
	}
	cat, err := e.catalog()
	if err != nil {
		return evidencedoc.Document{}, err
	}
	// A probe's evidence is declared by its claims file, and explained
	// from what the file asks for.
	in := evidencedoc.Input{Decls: append(framework.DeclaredEvidence(), cat.ProbeEvidence()...), Meanings: src.Meanings.Merge(evidencedoc.ProbeMeanings(cat)),
		SpecNeeds: evidencedoc.NeedsOf(framework.ListSpecs()), Catalog: cat, ReportDir: e.reportDir}
	if e.reportDir != "" {
		if in.Examples, err = evidencedoc.ReadExamples(e.reportDir); err != nil {
			return evidencedoc.Document{}, exitcode.Errorf(exitcode.Usage, "--report-dir: %v", err)
		}
	}
	return evidencedoc.Build(in), nil
}
