package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/framework/binaries"
	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/framework/cluster/kind"
	"github.com/kubeproof/kubeproof/framework/cluster/kubeconfig"
	"github.com/kubeproof/kubeproof/framework/cluster/local"
	"github.com/kubeproof/kubeproof/framework/exitcode"
	"github.com/kubeproof/kubeproof/framework/progress"
)

// options are the flags shared by the commands.
type options struct {
	provider   string
	name       string
	kubeconfig string
	context    string
	cacheDir   string

	// Cluster shape (up and run, local provider).
	kubernetesVersion string
	etcdVersion       string
	componentArgs     []string
	without           []string
	podCIDR           string
	serviceCIDR       string
	apiServerPort     int
	workers           int
	nodeImage         string
	// ephemeral: the command removes the cluster it makes when done.
	ephemeral bool
}

func newRootCommand() *cobra.Command {
	o := &options{}
	root := &cobra.Command{
		Use:   "kubeproof",
		Short: "Check documented Kubernetes behaviour, claim by claim, against a real cluster",
		Long: `kubeproof brings up a real Kubernetes cluster (or uses yours), runs Ginkgo suites that
each check one documented behaviour of the path from "kubectl apply" to a Running, Ready
Pod, and reports per claim whether the cluster confirmed it.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          usageArgs(cobra.NoArgs),
		// Without a command, help; with an unknown one, a usage error
		// (Args rejects it).
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return exitcode.With(exitcode.Usage, err)
	})
	pf := root.PersistentFlags()
	pf.StringVar(&o.provider, "provider", local.ProviderName, "cluster provider: local (processes on this machine), kind (Docker containers, made with kind) or kubeconfig (an existing cluster)")
	pf.StringVar(&o.name, "name", local.DefaultName, "cluster name (local and kind providers)")
	pf.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of an existing cluster (kubeconfig provider; default $KUBECONFIG)")
	pf.StringVar(&o.context, "context", "", "kubeconfig context (kubeconfig provider)")
	pf.StringVar(&o.cacheDir, "cache-dir", binaries.DefaultCacheDir(), "where built binaries and images are cached ($KUBEPROOF_CACHE_DIR)")

	root.AddCommand(
		newUpCommand(o), newDownCommand(o), newStatusCommand(o), newEnvCommand(o),
		newRunCommand(o), newFaultsCommand(o), newPrepareCommand(o), newVersionCommand(), newClaimsCommand(), newReportCommand(), newDockerdCommand(o), newImageCommand(o), newTraceCommand(o), newBenchCommand(o),
	)
	return root
}

// usageArgs marks argument errors as usage errors.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		return exitcode.With(exitcode.Usage, check(cmd, args))
	}
}

// addClusterFlags adds the flags that shape a cluster the local provider makes.
func addClusterFlags(cmd *cobra.Command, o *options) {
	f := cmd.Flags()
	f.StringVar(&o.kubernetesVersion, "kubernetes-version", binaries.DefaultKubernetesVersion, "Kubernetes release to build and run")
	f.StringVar(&o.etcdVersion, "etcd-version", binaries.DefaultEtcdVersion, "etcd release to build and run")
	f.StringArrayVar(&o.componentArgs, "component-arg", nil, "extra flag for a component, COMPONENT=--flag=value (repeatable), e.g. kube-apiserver=--anonymous-auth=false")
	f.StringSliceVar(&o.without, "without", nil, "leave a component out: "+strings.Join(local.Optional, ", ")+" (kind: the same)")
	f.StringVar(&o.podCIDR, "pod-cidr", "10.244.0.0/16", "pod network of the cluster (routed to the node, never outside)")
	f.StringVar(&o.serviceCIDR, "service-cidr", "10.96.0.0/16", "Service ClusterIP range")
	f.IntVar(&o.apiServerPort, "apiserver-port", 6443, "kube-apiserver port (on the cluster's own host-side address; local provider)")
	f.IntVar(&o.workers, "workers", kind.DefaultWorkers, "worker nodes besides the control plane (kind provider)")
	f.StringVar(&o.nodeImage, "node-image", "", "kind node image to use instead of building kubeproof's own (kind provider)")
}

// newProvider builds the provider the flags name. A cluster that a killed
// kubeproof command left behind is removed first, saying so.
func newProvider(cmd *cobra.Command, o *options, pr *progress.Printer) (cluster.Provider, error) {
	p, err := makeProvider(cmd, o, pr)
	if err != nil {
		return nil, err
	}
	if err := reapAbandoned(cmd.Context(), p, pr); err != nil {
		return nil, err
	}
	return p, nil
}

// reapAbandoned removes the provider's cluster if a kubeproof command that
// was killed before it could remove it left it behind.
func reapAbandoned(ctx context.Context, p cluster.Provider, pr *progress.Printer) error {
	a, ok := p.(cluster.Abandoner)
	if !ok {
		return nil
	}
	who, abandoned := a.Abandoned()
	if !abandoned {
		return nil
	}
	pr.Infof("the %s cluster here was left by %s, which was killed before it could remove it: removing it first", p.Name(), who)
	if err := p.Down(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("remove the cluster a killed kubeproof left: %w", err)
	}
	return nil
}

// makeProvider builds the provider the flags name.
func makeProvider(cmd *cobra.Command, o *options, pr *progress.Printer) (cluster.Provider, error) {
	switch o.provider {
	case local.ProviderName:
		compArgs, err := cluster.ParseComponentArgs(o.componentArgs)
		if err != nil {
			return nil, err
		}
		return local.New(local.Config{Shape: o.shape(compArgs), APIServerPort: o.apiServerPort, Progress: pr})
	case kind.ProviderName:
		if f := cmd.Flags().Lookup("apiserver-port"); f != nil && f.Changed {
			return nil, exitcode.Errorf(exitcode.Usage, "--apiserver-port is for the local provider; kind publishes the API server on a free port")
		}
		compArgs, err := cluster.ParseComponentArgs(o.componentArgs)
		if err != nil {
			return nil, err
		}
		return kind.New(kind.Config{Shape: o.shape(compArgs), Workers: o.workers, NodeImage: o.nodeImage, Progress: pr})
	case kubeconfig.ProviderName:
		for _, name := range []string{"component-arg", "without", "pod-cidr", "service-cidr", "apiserver-port", "kubernetes-version", "etcd-version", "name", "workers", "node-image"} {
			if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
				return nil, exitcode.Errorf(exitcode.Usage, "--%s shapes a cluster kubeproof makes; the kubeconfig provider uses an existing one", name)
			}
		}
		path := o.kubeconfig
		if path == "" {
			path = os.Getenv("KUBECONFIG")
		}
		if path == "" {
			return nil, exitcode.Errorf(exitcode.Usage, "--provider kubeconfig needs --kubeconfig or $KUBECONFIG")
		}
		return kubeconfig.New(path, o.context), nil
	default:
		return nil, exitcode.Errorf(exitcode.Usage, "unknown provider %q (known: %s, %s, %s)", o.provider, local.ProviderName, kind.ProviderName, kubeconfig.ProviderName)
	}
}

// printer is where progress goes: stderr, so that stdout stays parseable.
func printer() *progress.Printer { return progress.New(os.Stderr) }

func printStatus(s cluster.Status) {
	for _, l := range s.Lines {
		fmt.Printf("%-32s %-10s %s\n", l.Part, l.State, l.Detail)
	}
}

// makesClusters reports whether the provider brings clusters up and down
// (as opposed to using one that exists).
func makesClusters(provider string) bool {
	return provider == local.ProviderName || provider == kind.ProviderName
}

// shape is the cluster shape the flags describe.
func (o *options) shape(componentArgs map[string][]string) cluster.Shape {
	return cluster.Shape{
		Name:              o.name,
		KubernetesVersion: o.kubernetesVersion,
		EtcdVersion:       o.etcdVersion,
		CacheDir:          o.cacheDir,
		PodCIDR:           o.podCIDR,
		ServiceCIDR:       o.serviceCIDR,
		ComponentArgs:     componentArgs,
		Without:           o.without,
		Ephemeral:         o.ephemeral,
	}
}
