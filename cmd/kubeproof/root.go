package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision/kind"
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
	pf.StringVar(&o.provider, "provider", "local", providerHelp())
	pf.StringVar(&o.name, "name", cluster.DefaultName, "cluster name (providers that make clusters)")
	pf.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of an existing cluster (kubeconfig provider; default: as kubectl, $KUBECONFIG then ~/.kube/config)")
	pf.StringVar(&o.context, "context", "", "kubeconfig context (kubeconfig provider)")
	pf.BoolVar(&o.disposable, "disposable", false, "nobody else uses the existing cluster: also run the specs that add Nodes, label real ones, compact etcd or bind roles in default (kubeconfig provider)")
	pf.StringVar(&o.cacheDir, "cache-dir", cluster.DefaultCacheDir(), "where built binaries and images are cached ($KUBEPROOF_CACHE_DIR)")

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
	f.StringArrayVar(&o.componentArgs, "component-arg", nil, "extra flag for a component, COMPONENT=--flag=value (repeatable), e.g. kube-apiserver=--anonymous-auth=false")
	f.StringSliceVar(&o.without, "without", nil, optionalHelp())
	f.StringVar(&o.podCIDR, "pod-cidr", "10.244.0.0/16", "pod network of the cluster (routed to the node, never outside)")
	f.StringVar(&o.serviceCIDR, "service-cidr", "10.96.0.0/16", "Service ClusterIP range")
	f.IntVar(&o.apiServerPort, "apiserver-port", 6443, "kube-apiserver port (on the cluster's own host-side address; local provider)")
	f.IntVar(&o.etcdMembers, "etcd-members", 1, "etcd members, each a process of its own: 1 or 3 (local provider)")
	f.StringVar(&o.admissionConfig, "admission-control-config-file", "", "kube-apiserver's admission configuration (an AdmissionConfiguration), e.g. PodSecurity enforcing restricted by default: fixtures/admission/podsecurity-restricted.yaml (local provider)")
	f.IntVar(&o.workers, "workers", kind.DefaultWorkers, "worker nodes besides the control plane (kind provider)")
	f.StringVar(&o.nodeImage, "node-image", "", "kind node image to use instead of kubeproof's own, pulled if Docker lacks it; kubeproof's images and CNI plugins are put into its nodes (kind provider)")
	f.StringVar(&o.debianMirror, "debian-mirror", os.Getenv("KUBEPROOF_DEBIAN_MIRROR"), debianMirrorHelp)
	f.BoolVar(&o.loadImages, "load-images", true, "load the images the specs run into the nodes (false: the nodes pull them from --image-registry)")
	f.StringVar(&o.imageRegistry, "image-registry", "", "registry the nodes pull the images the specs run from (host[:port][/path]); run pushes what is missing there first, up only sets the nodes up for it")
	f.BoolVar(&o.insecureRegistry, "insecure-registry", false, "--image-registry speaks plain HTTP (the nodes' containerd gets a mirror for it; on kind, a registry on 127.0.0.1 is reached at the nodes' gateway)")
}

// debianMirrorHelp describes --debian-mirror, which kubeproof's node image
// reads (up, run, image build-node).
const debianMirrorHelp = "Debian mirror to bootstrap the kind node image's root filesystem from, as Debian bookworm, e.g. http://HOST/debian ($KUBEPROOF_DEBIAN_MIRROR; default: this machine's apt sources: their Debian mirror, or on Ubuntu the archive of the machine's own release)"

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

// providerFlags are the flags only some providers read (see
// cluster.Registration.Flags); shapeFlags shape a cluster kubeproof makes.
var (
	providerFlags = []string{"apiserver-port", "etcd-members", "admission-control-config-file", "workers", "node-image", "debian-mirror", "kubeconfig", "context", "disposable"}
	shapeFlags    = []string{"component-arg", "without", "pod-cidr", "service-cidr", "kubernetes-version", "etcd-version", "name", "load-images"}
)

// makeProvider builds the provider the flags name, through the registry. A
// flag the provider does not read is a usage error, never silently ignored.
func makeProvider(cmd *cobra.Command, o *options, pr *progress.Printer) (cluster.Provider, error) {
	reg, err := cluster.Lookup(o.provider)
	if err != nil {
		return nil, err
	}
	changed := func(name string) bool { f := cmd.Flags().Lookup(name); return f != nil && f.Changed }
	for _, name := range providerFlags {
		if changed(name) && !reg.Accepts(name) {
			return nil, exitcode.Errorf(exitcode.Usage, "--%s is not for the %s provider (%s)", name, reg.Name, reg.Summary)
		}
	}
	if !reg.Makes {
		for _, name := range shapeFlags {
			if changed(name) {
				return nil, exitcode.Errorf(exitcode.Usage, "--%s shapes a cluster kubeproof makes; the %s provider uses an existing one", name, reg.Name)
			}
		}
	}
	compArgs, err := cluster.ParseComponentArgs(o.componentArgs)
	if err != nil {
		return nil, err
	}
	opts := o.providerOptions(o.shape(compArgs), pr)
	opts.Kubeconfig, opts.Context, opts.Disposable = o.kubeconfig, o.context, o.disposable
	if o.admissionConfig != "" {
		// The provider keeps its own copy: the cluster does not depend
		// on the file staying where it is.
		if opts.AdmissionConfig, err = os.ReadFile(o.admissionConfig); err != nil {
			return nil, exitcode.Errorf(exitcode.Usage, "--admission-control-config-file: %v", err)
		}
	}
	return cluster.New(o.provider, opts)
}

// providerOptions are the options of a cluster kubeproof makes, from the
// flags.
func (o *options) providerOptions(shape cluster.Shape, pr *progress.Printer) cluster.Options {
	return cluster.Options{Shape: shape, Progress: pr,
		APIServerPort: o.apiServerPort, EtcdMembers: o.etcdMembers, Workers: o.workers, NodeImage: o.nodeImage, DebianMirror: o.debianMirror}
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
	reg, err := cluster.Lookup(provider)
	return err == nil && reg.Makes
}

// providerHelp describes the registered providers for --provider.
func providerHelp() string {
	var parts []string
	for _, r := range cluster.Registered() {
		parts = append(parts, fmt.Sprintf("%s (%s)", r.Name, r.Summary))
	}
	return "cluster provider: " + strings.Join(parts, ", ")
}

// optionalHelp lists the components providers can leave out.
func optionalHelp() string {
	var parts []string
	for _, r := range cluster.Registered() {
		if len(r.Optional) > 0 {
			parts = append(parts, r.Name+": "+strings.Join(r.Optional, ", "))
		}
	}
	return "leave a component out (" + strings.Join(parts, "; ") + ")"
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
		ImageRegistry:     o.imageRegistry,
		InsecureRegistry:  o.insecureRegistry,
		SkipImageLoad:     !o.loadImages,
	}
}
