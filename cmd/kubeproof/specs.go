package main

import (
	"flag"
	"testing"

	"github.com/kubeproof/kubeproof/framework"
	// Every suite registers its specs when imported.
	_ "github.com/kubeproof/kubeproof/suites"
)

// runSpecs makes this binary a Ginkgo test binary: `kubeproof run` starts it
// as a child named *.test, and the Ginkgo CLI can run it the same way. It
// accepts the flags a `go test` binary of ./suites accepts.
func runSpecs(args []string) int {
	dieWithParent()
	testing.Init() // the test.* flags Ginkgo's CLI passes to test binaries
	framework.RegisterFlags(flag.CommandLine)
	if err := flag.CommandLine.Parse(args); err != nil {
		return 2
	}
	if framework.RunSuite(specT{}, "kubeproof") {
		return 0
	}
	return 1
}

// specT stands in for *testing.T: RunSpecs reports the outcome itself and
// only calls Fail.
type specT struct{}

func (specT) Fail() {}
