package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/claims"
	"github.com/kubeproof/kubeproof/internal/cli/evidencedoc"
	"github.com/kubeproof/kubeproof/internal/exitcode"
)

// evidenceFlags are `claims specs --evidence`'s: the evidence catalog
// (package evidencedoc), for people or, with -o json, for tools.
type evidenceFlags struct {
	on        bool
	reportDir string
	output    string
}

func (e *evidenceFlags) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&e.on, "evidence", false, "list every evidence path each spec records (what a claims file's expect: names): its type, meaning, and the capabilities its spec and the claims that read it require")
	f.StringVar(&e.reportDir, "report-dir", "", "with --evidence: a run's report directory, for the value each path had")
	addOutputFlag(cmd, &e.output)
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
	cat, err := claims.LoadAt(fixtures.Claims(), fixtures.ClaimsDir)
	if err != nil {
		return evidencedoc.Document{}, err
	}
	in := evidencedoc.Input{Decls: framework.DeclaredEvidence(), Meanings: src.Meanings, SpecNeeds: src.Specs, Catalog: cat, ReportDir: e.reportDir}
	if e.reportDir != "" {
		if in.Examples, err = evidencedoc.ReadExamples(e.reportDir); err != nil {
			return evidencedoc.Document{}, exitcode.Errorf(exitcode.Usage, "--report-dir: %v", err)
		}
	}
	return evidencedoc.Build(in), nil
}
