package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/internal/clusterflags"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/runner"
)

// options are the flags shared by the commands: which cluster, and the
// shape of one kubeproof makes.
type options = runner.ClusterOptions

func newRootCommand() *cobra.Command {
	o := &options{}
	root := &cobra.Command{
		Use:   "kubeproof",
		Short: "Check documented Kubernetes behaviour, claim by claim, against a real cluster",
		Long: `kubeproof brings up a real Kubernetes cluster (or uses yours), runs Ginkgo suites that
each check one documented behaviour of the path from "kubectl apply" to a Running, Ready
Pod, and reports per claim whether the cluster confirmed it.`,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          usageArgs(cobra.NoArgs),
		// Without a command, help; with an unknown one, a usage error
		// (Args rejects it).
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetVersionTemplate(versionLine() + "\n")
	// Run by kubectl as its plugin (kubectl-kubeproof in PATH, as krew
	// installs it), the help names the command as the user types it.
	if strings.HasPrefix(filepath.Base(os.Args[0]), "kubectl-") {
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl kubeproof"}
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return exitcode.With(exitcode.Usage, err)
	})
	pf := root.PersistentFlags()
	clusterflags.Provider.String(pf, &o.Provider, "local")
	clusterflags.Name.String(pf, &o.Name, clusterflags.DefaultName)
	clusterflags.Kubeconfig.String(pf, &o.Kubeconfig, "")
	clusterflags.Context.String(pf, &o.Context, "")
	clusterflags.Disposable.Bool(pf, &o.Disposable, false)
	clusterflags.CacheDir.String(pf, &o.CacheDir, clusterflags.DefaultCacheDir())

	root.AddCommand(
		newUpCommand(o), newDownCommand(o), newStatusCommand(o), newEnvCommand(o),
		newRunCommand(o), newMatrixCommand(o), newFaultsCommand(o), newPrepareCommand(o), newVersionCommand(), newClaimsCommand(), newReportCommand(), newDockerdCommand(o), newImageCommand(o), newTraceCommand(o), newBenchCommand(o), newCleanupCommand(o), newRegistryCommand(o),
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

// addClusterFlags adds the flags that shape a cluster the local provider makes.
func addClusterFlags(cmd *cobra.Command, o *options) {
	f := cmd.Flags()
	clusterflags.Releases(f, &o.KubernetesVersion, &o.EtcdVersion, "Kubernetes release to build and run", "etcd release to build and run")
	clusterflags.ComponentArg.StringArray(f, &o.ComponentArgs)
	clusterflags.Without.StringSlice(f, &o.Without)
	clusterflags.PodCIDR.String(f, &o.PodCIDR, "10.244.0.0/16")
	clusterflags.ServiceCIDR.String(f, &o.ServiceCIDR, "10.96.0.0/16")
	clusterflags.APIServerPort.Int(f, &o.APIServerPort, 6443)
	clusterflags.EtcdMembers.Int(f, &o.EtcdMembers, 1)
	clusterflags.AdmissionConfig.String(f, &o.AdmissionConfig, "")
	clusterflags.Workers.Int(f, &o.Workers, clusterflags.DefaultWorkers)
	clusterflags.NodeImage.String(f, &o.NodeImage, "")
	clusterflags.DebianMirror.String(f, &o.DebianMirror, os.Getenv("KUBEPROOF_DEBIAN_MIRROR"))
	clusterflags.LoadImages.Bool(f, &o.LoadImages, true)
	clusterflags.ImageRegistry.String(f, &o.ImageRegistry, "")
	clusterflags.InsecureRegistry.Bool(f, &o.InsecureRegistry, false)
}

// newProvider builds the provider the flags name (see runner.NewProvider).
func newProvider(cmd *cobra.Command, o *options, pr *progress.Printer) (cluster.Provider, error) {
	withFlags(cmd, o)
	return runner.NewProvider(cmd.Context(), *o, pr)
}

// withFlags tells the engine which flags the user gave: a flag the
// provider does not read is refused only when given.
func withFlags(cmd *cobra.Command, o *options) {
	o.Changed = func(name string) bool { f := cmd.Flags().Lookup(name); return f != nil && f.Changed }
}

// printer is where progress goes: stderr, so that stdout stays parseable.
func printer() *progress.Printer { return runner.Printer() }

func printStatus(s cluster.Status) {
	for _, l := range s.Lines {
		fmt.Printf("%-32s %-10s %s\n", l.Part, l.State, l.Detail)
	}
}
