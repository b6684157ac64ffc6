package runner

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/onsi/ginkgo/v2/ginkgo/command"
	ginkgorun "github.com/onsi/ginkgo/v2/ginkgo/run"
	"golang.org/x/sys/unix"

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

// dieWithParent makes the kernel kill this process when its parent dies:
// a spec process (or Ginkgo's CLI that runs them) must not outlive the
// kubeproof that started it, even when that one is killed with SIGKILL and
// can run no cleanup of its own.
func dieWithParent() {
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "kubeproof: cannot tie the spec process to its parent: %v\n", err)
		return
	}
	// The parent may have died before the call: then another process (init,
	// or a subreaper) adopted us. The parent itself may be PID 1: kubeproof
	// is, in its container image.
	if os.Getppid() != parentAtStart {
		fmt.Fprintf(os.Stderr, "kubeproof: the process that started this one (pid %d) is gone\n", parentAtStart)
		os.Exit(1)
	}
}

// parentAtStart is this process's parent when it started, before anything
// could have made it an orphan but a parent dying within the first
// instructions.
var parentAtStart = os.Getppid()

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
