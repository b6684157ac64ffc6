// Command kubeproof checks, claim by claim, what documentation says happens
// between `kubectl apply` and a Running, Ready Pod, against a real cluster.
//
// Exit codes (see internal/exitcode): 0 everything ran and passed, 1 a spec
// failed, 2 usage, 3 permission, 4 conflict, 5 missing tool, 6 bad
// kubeconfig, 7 cluster unreachable, 8 cluster setup failed, 9 internal, 10
// refuted (--fail-on-refuted), 11 forbidden, 12 registry, 15 credentials
// refused, 130 interrupted, 143 terminated.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/noproxy"
	"github.com/kubeproof/kubeproof/internal/provision"
	"github.com/kubeproof/kubeproof/internal/runner"
)

func main() {
	// Before any client reads the environment (Go reads it once): a proxy
	// it names never gets the requests for the clusters' own addresses.
	noproxy.Exempt(noproxy.Local...)
	// This binary opens clusters of every provider: the commands, and the
	// specs when it runs as the spec binary.
	provision.RegisterOpeners()
	// Run as a Ginkgo test binary when invoked as one (see specs.go), or
	// as Ginkgo's CLI for parallel runs (see runner.GinkgoCLI).
	switch base := filepath.Base(os.Args[0]); {
	case strings.HasSuffix(base, ".test"):
		os.Exit(runSpecs(os.Args[1:]))
	case base == runner.GinkgoProgram:
		os.Exit(runner.GinkgoCLI(os.Args[1:]))
	}
	ctx, in := runner.CatchInterrupts(context.Background())
	err := newRootCommand().ExecuteContext(ctx)
	in.Stop()
	os.Exit(int(exitWith(ctx, err)))
}

// exitWith prints err on one line (the first line of a multi-line error is
// the message; the rest is context, indented) and returns the exit code.
func exitWith(ctx context.Context, err error) exitcode.Code {
	if err == nil {
		return exitcode.OK
	}
	code := exitcode.Of(err)
	if in := runner.InterruptsOf(ctx); in.Interrupted() || errors.Is(err, context.Canceled) {
		code = in.Code()
	}
	if code == exitcode.Interrupted || code == exitcode.Terminated {
		fmt.Fprintf(os.Stderr, "kubeproof: %s\n", code)
		return code
	}
	if !errors.Is(err, errReported) {
		msg := err.Error()
		if !colorful(os.Stderr) {
			msg = ansiEscape.ReplaceAllString(msg, "")
		}
		lines := strings.Split(strings.TrimSpace(msg), "\n")
		fmt.Fprintf(os.Stderr, "kubeproof: error: %s\n", lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(os.Stderr, "    %s\n", l)
		}
	}
	return code
}

// ansiEscape is a terminal's colour sequence (Ginkgo's errors carry some).
var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// colorful says whether f may get colours: a terminal, and neither NO_COLOR
// (https://no-color.org) nor --no-color (which sets it) asks otherwise.
func colorful(f *os.File) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// errReported marks an outcome already printed (Ginkgo printed the failed
// specs); only its exit code remains to be given.
var errReported = runner.ErrReported
