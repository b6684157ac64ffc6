// Command gen writes what the suites' source says of their evidence
// (source.json) and docs/evidence.md (go generate in
// internal/tools/evidencedoc): gen SOURCE DOC, run in that package's
// directory. It carries every suite, to know their evidence and specs.
package main

import (
	"fmt"
	"os"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/internal/tools/evidencedoc/gosource"
	_ "github.com/kubeproof/kubeproof/suites"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gen SOURCE DOC")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(sourceFile, docFile string) error {
	cat, err := claims.LoadAt(fixtures.Claims(), fixtures.ClaimsDir)
	if err != nil {
		return fmt.Errorf("load the built-in claims: %w", err)
	}
	// go generate runs in the package's directory, three below the root.
	source, md, err := gosource.Generate("../../..", framework.DeclaredEvidence(), cat, framework.ListSpecs())
	if err != nil {
		return err
	}
	if err := os.WriteFile(sourceFile, source, 0o644); err != nil {
		return fmt.Errorf("write what the source says of the evidence: %w", err)
	}
	if err := os.WriteFile(docFile, md, 0o644); err != nil {
		return fmt.Errorf("write the evidence page: %w", err)
	}
	return nil
}
