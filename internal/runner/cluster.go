package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/internal/clusterflags"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision/create"

	// Every provider kubeproof has (local, kind, kubeconfig) registers
	// itself: the engine reaches them through the registry only.
	_ "github.com/kubeproof/kubeproof/internal/provision/providers"
)

// The cluster contract knows no exit codes: its connection errors are
// typed, and these are the codes the commands exit with for them.
func init() {
	exitcode.Classify(cluster.ErrKubeconfig, exitcode.Kubeconfig)
	exitcode.Classify(cluster.ErrUnreachable, exitcode.Unreachable)
}

// ClusterOptions say which cluster a command works on: the provider, how
// to reach an existing cluster, and the shape of one kubeproof makes.
type ClusterOptions struct {
	Provider   string
	Name       string
	Kubeconfig string
	Context    string
	Disposable bool
	CacheDir   string

	// Cluster shape (up and run, local provider).
	KubernetesVersion string
	EtcdVersion       string
	ComponentArgs     []string
	Without           []string
	PodCIDR           string
	ServiceCIDR       string
	APIServerPort     int
	EtcdMembers       int
	// AdmissionConfig is a file for kube-apiserver's
	// --admission-control-config-file (local provider).
	AdmissionConfig string
	Workers         int
	NodeImage       string
	DebianMirror    string
	// Ephemeral: the command removes the cluster it makes when done.
	Ephemeral bool
	// The registry the nodes pull kubeproof's images from, and whether
	// the images are loaded into the nodes of a cluster kubeproof makes.
	ImageRegistry    string
	InsecureRegistry bool
	LoadImages       bool

	// Changed says whether the user gave the flag of this name: a flag
	// the provider does not read is refused only when given. Nil: none.
	Changed func(flag string) bool
}

func (o ClusterOptions) changed(flag string) bool { return o.Changed != nil && o.Changed(flag) }

// Printer is where progress goes: stderr, so that stdout stays parseable.
func Printer() *progress.Printer { return progress.New(os.Stderr) }

// NewProvider builds the provider the options name. A cluster that a
// killed kubeproof command left behind is removed first, saying so.
func NewProvider(ctx context.Context, o ClusterOptions, pr *progress.Printer) (cluster.Provider, error) {
	p, err := makeProvider(o, pr)
	if err != nil {
		return nil, err
	}
	if err := reapAbandoned(ctx, p, pr); err != nil {
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

// makeProvider builds the provider the options name, through the registry.
// A flag the provider does not read is a usage error, never silently
// ignored.
func makeProvider(o ClusterOptions, pr *progress.Printer) (cluster.Provider, error) {
	reg, err := create.Lookup(o.Provider)
	if err != nil {
		return nil, err
	}
	if err := clusterflags.Refuse(reg, o.changed); err != nil {
		return nil, err
	}
	compArgs, err := clusterflags.ParseComponentArgs(o.ComponentArgs)
	if err != nil {
		return nil, err
	}
	local := create.Local{APIServerPort: o.APIServerPort, EtcdMembers: o.EtcdMembers}
	if o.AdmissionConfig != "" {
		// The provider keeps its own copy: the cluster does not depend
		// on the file staying where it is.
		if local.AdmissionConfig, err = os.ReadFile(o.AdmissionConfig); err != nil {
			return nil, exitcode.Errorf(exitcode.Usage, "--%s: %v", clusterflags.AdmissionConfig.Name, err)
		}
	}
	opts := append(o.providerOptions(o.shape(compArgs), local, pr),
		create.WithExisting(create.Existing{Kubeconfig: o.Kubeconfig, Context: o.Context, Disposable: o.Disposable}))
	return create.New(o.Provider, opts...)
}

// providerOptions are the options of a cluster kubeproof makes.
func (o ClusterOptions) providerOptions(shape create.Shape, local create.Local, pr *progress.Printer) []create.Option {
	return []create.Option{create.WithShape(shape), create.WithProgress(pr), create.WithLocal(local),
		create.WithKind(create.Kind{Workers: o.Workers, NodeImage: o.NodeImage, DebianMirror: o.DebianMirror})}
}

// shape is the cluster shape the options describe.
func (o ClusterOptions) shape(componentArgs map[string][]string) create.Shape {
	return create.Shape{
		Name:              o.Name,
		KubernetesVersion: o.KubernetesVersion,
		EtcdVersion:       o.EtcdVersion,
		CacheDir:          o.CacheDir,
		PodCIDR:           o.PodCIDR,
		ServiceCIDR:       o.ServiceCIDR,
		ComponentArgs:     componentArgs,
		Without:           o.Without,
		Ephemeral:         o.Ephemeral,
		ImageRegistry:     o.ImageRegistry,
		InsecureRegistry:  o.InsecureRegistry,
		SkipImageLoad:     !o.LoadImages,
	}
}

// MakesClusters reports whether the provider brings clusters up and down
// (as opposed to using one that exists).
func MakesClusters(provider string) bool {
	reg, err := create.Lookup(provider)
	return err == nil && reg.Makes
}

// ClusterFor returns the info of the cluster the provider names, bringing
// it up first if the provider makes clusters and it is not up; down then
// removes it again unless keep is set (and does nothing otherwise).
// removes says whether down removes the cluster.
func ClusterFor(ctx context.Context, o ClusterOptions, p cluster.Provider, keep bool) (info *cluster.Info, down func() error, removes bool, err error) {
	nothing := func() error { return nil }
	info, err = p.Info(ctx)
	if err == nil {
		return info, nothing, false, nil
	}
	if !MakesClusters(o.Provider) {
		return nil, nothing, false, err
	}
	Printer().Infof("cluster %q is not up (%v): bringing it up", o.Name, err)
	if info, err = p.Up(ctx); err != nil {
		return nil, nothing, false, err
	}
	if keep {
		return info, nothing, false, nil
	}
	return info, func() error { return p.Down(context.WithoutCancel(ctx)) }, true, nil
}

// ExportLogs copies the cluster's component logs into the report
// directory, for providers that can.
func ExportLogs(ctx context.Context, p cluster.Provider, reportDir string) {
	le, ok := p.(cluster.LogExporter)
	if !ok {
		return
	}
	dir := filepath.Join(reportDir, "logs")
	if err := le.ExportLogs(ctx, dir); err != nil {
		fmt.Fprintf(os.Stderr, "kubeproof: could not export cluster logs: %v\n", err)
		return
	}
	fmt.Fprintf(os.Stderr, " • cluster logs for the failure are in %s\n", dir)
}
