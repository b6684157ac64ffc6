package main

import (
	"github.com/kubeproof/kubeproof/internal/runner"
	// Every suite registers its specs when imported: this binary is also
	// the spec runner.
	_ "github.com/kubeproof/kubeproof/suites"
)

// runSpecs runs this binary as the Ginkgo test binary of the suites it
// imports (see runner.SpecProcess).
func runSpecs(args []string) int { return runner.SpecProcess(args) }
