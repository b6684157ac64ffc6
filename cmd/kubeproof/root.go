package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/framework/cluster"
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
	pf.StringVar(&o.Provider, "provider", "local", runner.ProviderHelp())
	pf.StringVar(&o.Name, "name", cluster.DefaultName, "cluster name (providers that make clusters)")
	pf.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig of an existing cluster (kubeconfig provider; default: as kubectl, $KUBECONFIG then ~/.kube/config)")
	pf.StringVar(&o.Context, "context", "", "kubeconfig context (kubeconfig provider)")
	pf.BoolVar(&o.Disposable, "disposable", false, "nobody else uses the existing cluster: also run the specs that add Nodes, label real ones, compact etcd or bind roles in default (kubeconfig provider)")
	pf.StringVar(&o.CacheDir, "cache-dir", cluster.DefaultCacheDir(), "where built binaries and images are cached ($KUBEPROOF_CACHE_DIR)")

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
	releaseFlags(f, &o.KubernetesVersion, &o.EtcdVersion, "Kubernetes release to build and run", "etcd release to build and run")
	f.StringArrayVar(&o.ComponentArgs, "component-arg", nil, "extra flag for a component, COMPONENT=--flag=value (repeatable), e.g. kube-apiserver=--anonymous-auth=false")
	f.StringSliceVar(&o.Without, "without", nil, runner.OptionalHelp())
	f.StringVar(&o.PodCIDR, "pod-cidr", "10.244.0.0/16", "pod network of the cluster (routed to the node, never outside)")
	f.StringVar(&o.ServiceCIDR, "service-cidr", "10.96.0.0/16", "Service ClusterIP range")
	f.IntVar(&o.APIServerPort, "apiserver-port", 6443, "kube-apiserver port (on the cluster's own host-side address; local provider)")
	f.IntVar(&o.EtcdMembers, "etcd-members", 1, "etcd members, each a process of its own: 1 or 3 (local provider)")
	f.StringVar(&o.AdmissionConfig, "admission-control-config-file", "", "kube-apiserver's admission configuration (an AdmissionConfiguration), e.g. PodSecurity enforcing restricted by default: fixtures/admission/podsecurity-restricted.yaml (local provider)")
	f.IntVar(&o.Workers, "workers", runner.DefaultWorkers, "worker nodes besides the control plane (kind provider)")
	f.StringVar(&o.NodeImage, "node-image", "", "kind node image to use instead of kubeproof's own, pulled if Docker lacks it; kubeproof's images and CNI plugins are put into its nodes (kind provider)")
	f.StringVar(&o.DebianMirror, "debian-mirror", os.Getenv("KUBEPROOF_DEBIAN_MIRROR"), debianMirrorHelp)
	f.BoolVar(&o.LoadImages, "load-images", true, "load the images the specs run into the nodes (false: the nodes pull them from --image-registry)")
	f.StringVar(&o.ImageRegistry, "image-registry", "", "registry the nodes pull the images the specs run from (host[:port][/path]); run pushes what is missing there first, up only sets the nodes up for it")
	f.BoolVar(&o.InsecureRegistry, "insecure-registry", false, "--image-registry speaks plain HTTP (the nodes' containerd gets a mirror for it; on kind, a registry on 127.0.0.1 is reached at the nodes' gateway)")
}

// debianMirrorHelp describes --debian-mirror, which kubeproof's node image
// reads (up, run, image build-node).
const debianMirrorHelp = "Debian mirror to bootstrap the kind node image's root filesystem from, as Debian bookworm, e.g. http://HOST/debian ($KUBEPROOF_DEBIAN_MIRROR; default: this machine's apt sources: their Debian mirror, or on Ubuntu the archive of the machine's own release)"

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
