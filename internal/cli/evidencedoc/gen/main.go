// Command gen writes the evidence meanings and docs/evidence.md (go
// generate in internal/cli/evidencedoc): gen MEANINGS DOC, run in that
// package's directory. It carries every suite, to know their evidence.
package main

import (
	"fmt"
	"os"

	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/claims"
	"github.com/kubeproof/kubeproof/internal/cli/evidencedoc/gosource"
	_ "github.com/kubeproof/kubeproof/suites"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gen MEANINGS DOC")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(meaningsFile, docFile string) error {
	cat, err := claims.LoadAt(fixtures.Claims(), fixtures.ClaimsDir)
	if err != nil {
		return fmt.Errorf("load the built-in claims: %w", err)
	}
	// go generate runs in the package's directory, three below the root.
	meanings, md, err := gosource.Generate("../../..", framework.DeclaredEvidence(), cat, SpecNames())
	if err != nil {
		return err
	}
	if err := os.WriteFile(meaningsFile, meanings, 0o644); err != nil {
		return fmt.Errorf("write the evidence meanings: %w", err)
	}
	if err := os.WriteFile(docFile, md, 0o644); err != nil {
		return fmt.Errorf("write the evidence page: %w", err)
	}
	return nil
}

// SpecNames are the specs' texts by ID, for the page's headings.
func SpecNames() map[string]string {
	names := map[string]string{}
	for _, s := range framework.ListSpecs() {
		names[s.ID] = s.Name
	}
	return names
}
