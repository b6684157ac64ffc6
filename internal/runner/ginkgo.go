package runner

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/onsi/ginkgo/v2/ginkgo/command"
	ginkgorun "github.com/onsi/ginkgo/v2/ginkgo/run"

	"github.com/kubeproof/kubeproof/framework"
)

// GinkgoProgram is the argv[0] under which this binary acts as the Ginkgo
// CLI's `run` command, to run the specs in parallel processes: Ginkgo's CLI
// owns the coordination of parallel processes, so kubeproof uses it rather
// than doing that itself.
const GinkgoProgram = "kubeproof-ginkgo"

// GinkgoCLI runs `ginkgo run args -- additionalArgs` and returns its exit
// code (the CLI ends by panicking with its exit details).
func GinkgoCLI(args []string) (code int) {
	defer func() {
		if r := recover(); r != nil {
			details, ok := r.(command.AbortDetails)
			if !ok {
				panic(r)
			}
			if details.Error != nil {
				fmt.Fprintln(os.Stderr, details.Error)
			}
			code = details.ExitCode
		}
	}()
	dieWithParent()
	additional := []string{}
	if i := slices.Index(args, "--"); i >= 0 {
		args, additional = args[:i], args[i+1:]
	}
	ginkgorun.BuildRunCommand().Run(args, additional)
	return 0
}

// specsBinary makes the path under which Ginkgo's CLI runs this binary as a
// precompiled test binary (it must end in .test): a symlink in dir.
func specsBinary(dir string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("locate kubeproof executable: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	link := filepath.Join(dir, "kubeproof-specs.test")
	_ = os.Remove(link)
	if err := os.Symlink(exe, link); err != nil {
		return "", fmt.Errorf("link the spec runner: %w", err)
	}
	return link, nil
}

// SpecProcess makes this binary a Ginkgo test binary: the engine starts it
// as a child named *.test, and the Ginkgo CLI can run it the same way. It
// accepts the flags a `go test` binary of ./suites accepts; the suites
// are those the binary imports.
func SpecProcess(args []string) int {
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
