package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/internal/exitcode"
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
