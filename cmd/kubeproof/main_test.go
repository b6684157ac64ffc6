package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/judge"
	"github.com/kubeproof/kubeproof/internal/report"
)

func exitFor(args ...string) exitcode.Code {
	root := newRootCommand()
	root.SetArgs(args)
	ctx := context.Background()
	return exitWith(ctx, root.ExecuteContext(ctx))
}

// Bad input gets a distinct exit code before anything is touched.
func TestBadInputExitCodes(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing-kubeconfig")
	notAdmission := filepath.Join(t.TempDir(), "authn.yaml")
	if err := os.WriteFile(notAdmission, []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want exitcode.Code
	}{
		{[]string{"up", "--provider", "nope"}, exitcode.Usage},
		{[]string{"up", "--no-such-flag"}, exitcode.Usage},
		{[]string{"no-such-command"}, exitcode.Usage},
		{[]string{"up", "extra-argument"}, exitcode.Usage},
		{[]string{"up", "--name", "Not_A_Name"}, exitcode.Usage},
		{[]string{"up", "--component-arg", "kube-apiserver"}, exitcode.Usage},
		{[]string{"up", "--without", "etcd"}, exitcode.Usage},
		{[]string{"up", "--provider", "local", "--debian-mirror", "http://127.0.0.1/debian"}, exitcode.Usage},
		{[]string{"run", "--label-filter", "&&"}, exitcode.Usage},
		{[]string{"run", "--focus", "("}, exitcode.Usage},
		{[]string{"up", "--admission-control-config-file", missing}, exitcode.Usage},
		{[]string{"up", "--admission-control-config-file", notAdmission}, exitcode.Usage},
		{[]string{"up", "--provider", "kind", "--admission-control-config-file", notAdmission}, exitcode.Usage},
		{[]string{"run", "--provider", "kubeconfig", "--kubeconfig", missing, "--without", "kube-proxy"}, exitcode.Usage},
		{[]string{"run", "--provider", "kubeconfig", "--kubeconfig", missing, "--report-dir", t.TempDir()}, exitcode.Kubeconfig},
		{[]string{"status", "--provider", "kubeconfig", "--kubeconfig", missing}, exitcode.Kubeconfig},
		// --kubeconfig or --context alone name the cluster that exists.
		{[]string{"run", "--kubeconfig", missing, "--report-dir", t.TempDir()}, exitcode.Kubeconfig},
		{[]string{"status", "--context", "nope", "--kubeconfig", missing}, exitcode.Kubeconfig},
		{[]string{"run", "--kubeconfig", missing, "--etcd-members", "3"}, exitcode.Usage},
		{[]string{"run", "--provider", "local", "--context", "c"}, exitcode.Usage},
	}
	for _, tc := range cases {
		if got := exitFor(tc.args...); got != tc.want {
			t.Errorf("kubeproof %v: exit %d (%v), want %d (%v)", tc.args, got, got, tc.want, tc.want)
		}
	}
}

// Every command that holds others refuses a name that is none of them
// (cobra alone prints the help and exits 0 there).
func TestUnknownSubcommandIsUsageError(t *testing.T) {
	var groups [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.HasSubCommands() {
			groups = append(groups, path)
		}
		for _, sub := range c.Commands() {
			walk(sub, append(slices.Clone(path), sub.Name()))
		}
	}
	walk(newRootCommand(), nil)
	if len(groups) < 2 {
		t.Fatalf("found %d commands with subcommands", len(groups))
	}
	for _, g := range groups {
		args := append(slices.Clone(g), "no-such-command")
		if got := exitFor(args...); got != exitcode.Usage {
			t.Errorf("kubeproof %v: exit %d (%v), want %d (%v)", args, got, got, exitcode.Usage, exitcode.Usage)
		}
	}
}

func TestShellQuote(t *testing.T) {
	if got := shellQuote("/a b/it's"); got != `'/a b/it'\''s'` {
		t.Fatalf("shellQuote = %s", got)
	}
}

// A run's exit code: a harness error as it is, then any claim in error
// (13, even without a failed spec and without --fail-on-refuted), then a
// failed spec, then refuted claims only with --fail-on-refuted.
func TestRunOutcome(t *testing.T) {
	specsFailed := exitcode.With(exitcode.SpecsFailed, errReported)
	rep := func(counts map[judge.Verdict]int) report.Report {
		r := report.Report{Summary: map[string]int{}}
		for v, n := range counts {
			r.Summary[string(v)] = n
		}
		return r
	}
	clean := rep(map[judge.Verdict]int{judge.Confirmed: 3})
	refuted := rep(map[judge.Verdict]int{judge.Confirmed: 3, judge.Refuted: 1})
	errored := rep(map[judge.Verdict]int{judge.Confirmed: 3, judge.Refuted: 1, judge.Error: 2})
	for _, tc := range []struct {
		name     string
		failOn   bool
		rep      report.Report
		runErr   error
		wantCode exitcode.Code
	}{
		{"clean", false, clean, nil, exitcode.OK},
		{"refuted without the flag", false, refuted, nil, exitcode.OK},
		{"refuted with the flag", true, refuted, nil, exitcode.Refuted},
		{"an error verdict without the flag", false, errored, nil, exitcode.ClaimsErrored},
		{"an error verdict with the flag", true, errored, nil, exitcode.ClaimsErrored},
		{"an error verdict and a failed spec", false, errored, specsFailed, exitcode.ClaimsErrored},
		{"a failed spec and refuted claims", true, refuted, specsFailed, exitcode.SpecsFailed},
		{"a harness error", true, errored, exitcode.Errorf(exitcode.Unreachable, "gone"), exitcode.Unreachable},
	} {
		err := refutedOptions{failOnRefuted: tc.failOn}.outcome(tc.rep, tc.runErr)
		if got := exitcode.Of(err); got != tc.wantCode {
			t.Errorf("%s: exit code %d (%v), want %d", tc.name, got, err, tc.wantCode)
		}
	}
}

// -v is no longer --version: "kubeproof -v run" is a verbose run (here
// its dry run), and the root's help lists every exit code.
func TestRootFlags(t *testing.T) {
	root := newRootCommand()
	if f := root.Flags().Lookup("version"); f == nil || f.Shorthand != "" {
		t.Fatalf("--version: %+v, want a flag without shorthand", f)
	}
	args := []string{"-v", "run", "--dry-run"}
	cmd, _, err := root.Find(args)
	if err != nil || cmd.Name() != "run" {
		t.Fatalf("kubeproof -v run finds %v (%v), want run", cmd, err)
	}
	if err := cmd.ParseFlags(args); err != nil || !verbose(cmd) {
		t.Errorf("kubeproof -v run: %v, verbose %v", err, verbose(cmd))
	}
	var help strings.Builder
	root.SetOut(&help)
	root.SetArgs([]string{"help", "exit-codes"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, e := range exitcode.Table {
		if !strings.Contains(help.String(), fmt.Sprintf("%3d  ", e.Code)) {
			t.Errorf("kubeproof help exit-codes does not list %d:\n%s", e.Code, help.String())
		}
	}
	if !strings.Contains(newRootCommand().Long, exitcode.Text()) {
		t.Error("kubeproof --help does not list the exit codes")
	}
}

// -o has one meaning: wherever a command has it, it is --output, an output
// format (table or json); a file or a directory has a flag of its own.
func TestOutputIsAFormat(t *testing.T) {
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Shorthand == "o" || f.Name == "output" {
				n++
				if f.Name != "output" || f.Shorthand != "o" || f.DefValue != "table" {
					t.Errorf("%s: flag --%s (-%s, default %q): -o/--output is the output format, default table", c.CommandPath(), f.Name, f.Shorthand, f.DefValue)
				}
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCommand())
	if n < 5 {
		t.Errorf("found -o on %d commands", n)
	}
}

// An error line carries no colour codes when NO_COLOR is set (and not on
// a pipe either): Ginkgo's label filter errors are coloured.
func TestErrorLineWithoutColour(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	code := exitWith(context.Background(), exitcode.Errorf(exitcode.Usage, "--label-filter %q: \x1b[1m\x1b[38;5;9mSyntax Error\x1b[0m", "&&"))
	os.Stderr = stderr
	w.Close()
	out, _ := io.ReadAll(r)
	if code != exitcode.Usage || strings.Contains(string(out), "\x1b[") || !strings.Contains(string(out), "Syntax Error") {
		t.Errorf("exit %d, stderr %q", code, out)
	}
}

// --no-color sets NO_COLOR for the processes kubeproof starts (Ginkgo's
// spec processes read it).
func TestNoColorFlag(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	if code := exitFor("--no-color", "claims", "list", "--document", "000"); code != exitcode.OK {
		t.Fatalf("exit %d", code)
	}
	if os.Getenv("NO_COLOR") != "1" {
		t.Errorf("NO_COLOR=%q after --no-color", os.Getenv("NO_COLOR"))
	}
}
