package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/clusterflags"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision"
	"github.com/kubeproof/kubeproof/internal/runner"
)

// options are the flags shared by the commands: which cluster, and the
// shape of one kubeproof makes.
type options = clusterflags.Values

func newRootCommand() *cobra.Command {
	o := &options{}
	root := &cobra.Command{
		Use:   "kubeproof",
		Short: "Check documented Kubernetes behaviour, claim by claim, against a real cluster",
		Long: `kubeproof brings up a real Kubernetes cluster (or uses yours), runs Ginkgo suites that
each check one documented behaviour of the path from "kubectl apply" to a Running, Ready
Pod, and reports per claim whether the cluster confirmed it.

Exit codes (kubeproof help exit-codes):
` + exitcode.Text(),
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          usageArgs(cobra.NoArgs),
		// Without a command, help; with an unknown one, a usage error
		// (Args rejects it).
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetVersionTemplate(versionLine() + "\n")
	// --version has no -v: -v is --verbose (run's, registry serve's), so
	// that "kubeproof -v run" is a verbose run, not the version.
	root.Flags().Bool("version", false, "print kubeproof's version and commit")
	root.PersistentFlags().BoolP("verbose", "v", false, "more output where a command has more to say (run: every spec's steps; registry serve: every request)")
	root.PersistentFlags().Bool("no-color", false, "no colour in any output (also when NO_COLOR is set in the environment)")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		// The spec processes (Ginkgo) read NO_COLOR from the environment
		// they inherit: the flag sets it for them.
		if on, _ := cmd.Flags().GetBool("no-color"); on {
			return os.Setenv("NO_COLOR", "1")
		}
		return nil
	}
	// Run by kubectl as its plugin (kubectl-kubeproof in PATH, as krew
	// installs it), the help names the command as the user types it.
	// As kubectl's plugin, its cluster is kubectl's current context.
	if o.Plugin = strings.HasPrefix(filepath.Base(os.Args[0]), "kubectl-"); o.Plugin {
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl kubeproof"}
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return exitcode.With(exitcode.Usage, err)
	})
	clusterflags.AddGlobal(root.PersistentFlags(), o)

	root.AddCommand(
		newUpCommand(o), newDownCommand(o), newStatusCommand(o), newEnvCommand(o),
		newRunCommand(o), newMatrixCommand(o), newFaultsCommand(o), newPrepareCommand(o), newVersionCommand(), newClaimsCommand(), newReportCommand(), newDockerdCommand(o), newImageCommand(o), newTraceCommand(o), newBenchCommand(o), newCleanupCommand(o), newRegistryCommand(o),
		newExitCodesTopic(),
	)
	registerCompletions(root)
	return root
}

// usageArgs marks argument errors as usage errors.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		return exitcode.With(exitcode.Usage, check(cmd, args))
	}
}

// groupCommand is a command that only holds others: alone it prints its
// help; with an argument that names none of them it is a usage error
// (cobra would print the help and exit 0).
func groupCommand(use, short, long string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args:  usageArgs(cobra.NoArgs),
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
}

// addClusterFlags adds the flags that shape a cluster kubeproof makes.
func addClusterFlags(cmd *cobra.Command, o *options) {
	clusterflags.AddShape(cmd.Flags(), o, "Kubernetes release to build and run", "etcd release to build and run")
}

// request is the cluster the flags ask for: a flag its provider would not
// read is refused, never silently ignored.
func request(cmd *cobra.Command, o *options) (provision.Request, error) {
	return o.Build(func(name string) bool { f := cmd.Flags().Lookup(name); return f != nil && f.Changed })
}

// newProvider builds the provider the flags name (see runner.NewProvider).
func newProvider(cmd *cobra.Command, o *options, pr *progress.Printer) (cluster.Provider, error) {
	req, err := request(cmd, o)
	if err != nil {
		return nil, err
	}
	return runner.NewProvider(cmd.Context(), req, pr)
}

// printer is where progress goes: stderr, so that stdout stays parseable.
func printer() *progress.Printer { return runner.Printer() }

func printStatus(s cluster.Status) {
	for _, l := range s.Lines {
		fmt.Printf("%-32s %-10s %s\n", l.Part, l.State, l.Detail)
	}
}

// newExitCodesTopic is `kubeproof help exit-codes`: a help topic, not a
// command, that prints exitcode.Table.
func newExitCodesTopic() *cobra.Command {
	return &cobra.Command{
		Use:   "exit-codes",
		Short: "The exit codes of every command, for CI",
		Long: `Every command exits with one of these codes; a CI pipeline can tell them apart by number.
A run exits with the first that applies: an interruption (130, 143), a harness error
(2-9, 11, 12, 14, 15), a claim in error (13), a failed spec (1), a refuted claim with
--fail-on-refuted (10), else 0.

` + exitcode.Text(),
	}
}

// verbose is the root's -v/--verbose, wherever it was given.
func verbose(cmd *cobra.Command) bool {
	on, _ := cmd.Flags().GetBool("verbose")
	return on
}
