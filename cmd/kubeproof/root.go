package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/internal/cli/clusterflags"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision/create"
)

// options are the flags shared by the commands.
type options struct {
	provider   string
	name       string
	kubeconfig string
	context    string
	disposable bool
	cacheDir   string

	// Cluster shape (up and run, local provider).
	kubernetesVersion string
	etcdVersion       string
	componentArgs     []string
	without           []string
	podCIDR           string
	serviceCIDR       string
	apiServerPort     int
	etcdMembers       int
	// admissionConfig is a file for kube-apiserver's
	// --admission-control-config-file (local provider).
	admissionConfig string
	workers         int
	nodeImage       string
	debianMirror    string
	// ephemeral: the command removes the cluster it makes when done.
	ephemeral bool
	// The registry the nodes pull kubeproof's images from, and whether
	// the images are loaded into the nodes of a cluster kubeproof makes.
	imageRegistry    string
	insecureRegistry bool
	loadImages       bool
}

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
	clusterflags.Provider.String(pf, &o.provider, "local")
	clusterflags.Name.String(pf, &o.name, create.DefaultName)
	clusterflags.Kubeconfig.String(pf, &o.kubeconfig, "")
	clusterflags.Context.String(pf, &o.context, "")
	clusterflags.Disposable.Bool(pf, &o.disposable, false)
	clusterflags.CacheDir.String(pf, &o.cacheDir, create.DefaultCacheDir())

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
	releaseFlags(f, &o.kubernetesVersion, &o.etcdVersion, "Kubernetes release to build and run", "etcd release to build and run")
	clusterflags.ComponentArg.StringArray(f, &o.componentArgs)
	clusterflags.Without.StringSlice(f, &o.without)
	clusterflags.PodCIDR.String(f, &o.podCIDR, "10.244.0.0/16")
	clusterflags.ServiceCIDR.String(f, &o.serviceCIDR, "10.96.0.0/16")
	clusterflags.APIServerPort.Int(f, &o.apiServerPort, 6443)
	clusterflags.EtcdMembers.Int(f, &o.etcdMembers, 1)
	clusterflags.AdmissionConfig.String(f, &o.admissionConfig, "")
	clusterflags.Workers.Int(f, &o.workers, create.DefaultWorkers)
	clusterflags.NodeImage.String(f, &o.nodeImage, "")
	clusterflags.DebianMirror.String(f, &o.debianMirror, os.Getenv("KUBEPROOF_DEBIAN_MIRROR"))
	clusterflags.LoadImages.Bool(f, &o.loadImages, true)
	clusterflags.ImageRegistry.String(f, &o.imageRegistry, "")
	clusterflags.InsecureRegistry.Bool(f, &o.insecureRegistry, false)
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

// makeProvider builds the provider the flags name, through the registry. A
// flag the provider does not read is a usage error, never silently ignored.
func makeProvider(cmd *cobra.Command, o *options, pr *progress.Printer) (cluster.Provider, error) {
	reg, err := create.Lookup(o.provider)
	if err != nil {
		return nil, err
	}
	changed := func(name string) bool { f := cmd.Flags().Lookup(name); return f != nil && f.Changed }
	if err := clusterflags.Refuse(reg, changed); err != nil {
		return nil, err
	}
	compArgs, err := clusterflags.ParseComponentArgs(o.componentArgs)
	if err != nil {
		return nil, err
	}
	opts := append(o.providerOptions(o.shape(compArgs), pr),
		create.WithExisting(create.Existing{Kubeconfig: o.kubeconfig, Context: o.context, Disposable: o.disposable}))
	if o.admissionConfig != "" {
		// The provider keeps its own copy: the cluster does not depend
		// on the file staying where it is.
		data, err := os.ReadFile(o.admissionConfig)
		if err != nil {
			return nil, exitcode.Errorf(exitcode.Usage, "--%s: %v", clusterflags.AdmissionConfig.Name, err)
		}
		opts = append(opts, create.WithLocal(create.Local{APIServerPort: o.apiServerPort, EtcdMembers: o.etcdMembers, AdmissionConfig: data}))
	}
	return create.New(o.provider, opts...)
}

// providerOptions are the options of a cluster kubeproof makes, from the
// flags.
func (o *options) providerOptions(shape create.Shape, pr *progress.Printer) []create.Option {
	return []create.Option{create.WithShape(shape), create.WithProgress(pr),
		create.WithLocal(create.Local{APIServerPort: o.apiServerPort, EtcdMembers: o.etcdMembers}),
		create.WithKind(create.Kind{Workers: o.workers, NodeImage: o.nodeImage, DebianMirror: o.debianMirror})}
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
	reg, err := create.Lookup(provider)
	return err == nil && reg.Makes
}

// shape is the cluster shape the flags describe.
func (o *options) shape(componentArgs map[string][]string) create.Shape {
	return create.Shape{
		Name:              o.name,
		KubernetesVersion: o.kubernetesVersion,
		EtcdVersion:       o.etcdVersion,
		CacheDir:          o.cacheDir,
		PodCIDR:           o.podCIDR,
		ServiceCIDR:       o.serviceCIDR,
		ComponentArgs:     componentArgs,
		Without:           o.without,
		Ephemeral:         o.ephemeral,
		ImageRegistry:     o.imageRegistry,
		InsecureRegistry:  o.insecureRegistry,
		SkipImageLoad:     !o.loadImages,
	}
}
