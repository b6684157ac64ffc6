// Package provision is the one door into how kubeproof makes clusters, as
// kind's pkg/cluster is for kind: the providers (one table, below), what a
// cluster is made with (Options), and what is built before and beside a
// cluster (binaries, images, kind's node image, the private Docker daemon,
// a registry to serve). Everything behind it lives under
// internal/provision/internal, so the compiler holds the wall: the engine
// and the commands reach provisioning only through this package.
//
// The spec side never makes a cluster: a spec process knows its cluster by
// its cluster.Info and reaches the provider's abilities through
// cluster.Open, for which RegisterOpeners registers every provider's opener.
package provision

import (
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision/internal/config"
	"github.com/kubeproof/kubeproof/internal/provision/internal/kind"
	"github.com/kubeproof/kubeproof/internal/provision/internal/kubeconfig"
	"github.com/kubeproof/kubeproof/internal/provision/internal/local"
	"github.com/kubeproof/kubeproof/internal/provision/internal/releases"
)

// What a cluster is made with (see package config).
type (
	// Options are what a provider is made with: the shape of a cluster it
	// makes, and the options only one provider reads (Existing for
	// kubeconfig, Local for local, Kind for kind).
	Options = config.Options
	// Shape is what every provider that makes clusters is told.
	Shape = config.Shape
	// Existing are the kubeconfig provider's options.
	Existing = config.Existing
	// Local are the local provider's options.
	Local = config.Local
	// Kind are the kind provider's options.
	Kind = config.Kind
	// Published names the registry of kubeproof's published images.
	Published = config.Published
	// InCluster is what a run outside the cluster tells the run it starts
	// in a Pod there (Existing.InCluster).
	InCluster = config.InCluster
)

// Defaults of what a cluster is made with.
const (
	// DefaultName is the name of a cluster kubeproof makes when none is
	// given.
	DefaultName = config.DefaultName
	// DefaultWorkers are the kind provider's workers besides the control
	// plane.
	DefaultWorkers = config.DefaultWorkers
	// DefaultKubernetesVersion is the Kubernetes release clusters run by
	// default.
	DefaultKubernetesVersion = releases.DefaultKubernetesVersion
)

// DefaultCacheDir is where built binaries and images are kept:
// $KUBEPROOF_CACHE_DIR, else the user's cache directory.
func DefaultCacheDir() string { return config.DefaultCacheDir() }

// EtcdVersionFor is the etcd release that goes with a Kubernetes release.
func EtcdVersionFor(kubernetesVersion string) string {
	return releases.EtcdVersionFor(kubernetesVersion)
}

// TestedMinors are the Kubernetes minor releases kubeproof is tested with,
// oldest first.
func TestedMinors() []string { return releases.SupportedKubernetesMinors() }

// Provider is one provider kubeproof has: its name, what its clusters are,
// and how it is made and opened.
type Provider struct {
	// Name is what --provider takes.
	Name string
	// Summary says in a few words what the provider's clusters are.
	Summary string
	// Makes: the provider makes and removes its clusters (otherwise it
	// uses one that exists, and a Shape means nothing to it).
	Makes bool
	// Optional are the components a cluster can be made without
	// (Shape.Without).
	Optional []string
	// Linux: the provider runs its clusters on this machine with Linux's
	// namespaces, cgroups and mounts (or a Docker of its own), so it
	// refuses other systems.
	Linux bool

	new  func(Options) (cluster.Provider, error)
	open cluster.Opener
}

// providers is every provider kubeproof has. Adding one is a row here and
// a package under internal/provision/internal (docs/architecture.md).
var providers = []Provider{
	{
		Name: local.ProviderName, Summary: "processes on this machine", Makes: true, Optional: local.Optional, Linux: true,
		new: func(o Options) (cluster.Provider, error) {
			return local.New(local.Config{Shape: o.Shape, APIServerPort: o.Local.APIServerPort, EtcdMembers: o.Local.EtcdMembers,
				AdmissionConfig: o.Local.AdmissionConfig, Progress: o.Progress})
		},
		open: func(info *cluster.Info) (cluster.Provider, error) { return local.Open(info.Name) },
	},
	{
		Name: kind.ProviderName, Summary: "Docker containers, made with kind", Makes: true, Optional: kind.Optional, Linux: true,
		new: func(o Options) (cluster.Provider, error) {
			return kind.New(kind.Config{Shape: o.Shape, Workers: o.Kind.Workers, NodeImage: o.Kind.NodeImage,
				DebianMirror: o.Kind.DebianMirror, Progress: o.Progress})
		},
		open: func(info *cluster.Info) (cluster.Provider, error) { return kind.Open(info.Name) },
	},
	{
		Name: kubeconfig.ProviderName, Summary: "an existing cluster",
		// Without a kubeconfig named, kubectl's rules find it
		// ($KUBECONFIG, ~/.kube/config); the spec processes inherit the
		// same environment.
		new: func(o Options) (cluster.Provider, error) {
			p := kubeconfig.New(o.Existing.Kubeconfig, o.Existing.Context)
			p.Disposable = o.Existing.Disposable
			p.InCluster = o.Existing.InCluster
			return p, nil
		},
		// A spec process given only a kubeconfig opens it to learn what
		// the cluster can do (the provider has no abilities beyond that).
		open: func(info *cluster.Info) (cluster.Provider, error) {
			return kubeconfig.New(info.Kubeconfig, info.Context), nil
		},
	},
}

// RegisterOpeners lets cluster.Open open every provider's clusters: the
// spec side reaches a provider's abilities (an extra API server, stopping
// a component) only that way. The programs that run specs call it once:
// the CLI, which is also the spec binary, and the suites' test binary.
func RegisterOpeners() {
	for _, p := range providers {
		cluster.RegisterOpener(p.Name, p.open)
	}
}

// Providers are the providers kubeproof has, in the table's order.
func Providers() []Provider { return slices.Clone(providers) }

// Names are the providers' names, in the table's order.
func Names() []string {
	out := make([]string, len(providers))
	for i, p := range providers {
		out[i] = p.Name
	}
	return out
}

// Lookup returns the named provider; an unknown name is a usage error that
// lists the known ones.
func Lookup(name string) (Provider, error) {
	for _, p := range providers {
		if p.Name == name {
			return p, nil
		}
	}
	return Provider{}, exitcode.Errorf(exitcode.Usage, "unknown provider %q (known: %s)", name, strings.Join(Names(), ", "))
}

// The providers a request names when the user named none (see
// clusterflags): a cluster that exists is kubectl's current context, and
// kubeproof's own job without a kubeconfig is a local cluster.
const (
	ExistingProvider = kubeconfig.ProviderName
	DefaultProvider  = local.ProviderName
)

// goos is the system kubeproof runs on (tests pretend another).
var goos = runtime.GOOS

// Usable refuses, in one line, a provider that cannot run here.
func (p Provider) Usable() error {
	if p.Linux && goos != "linux" {
		return exitcode.Errorf(exitcode.Usage, "the %s provider (%s) needs Linux, not %s: check a cluster through its kubeconfig (--kubeconfig, --context, or kubectl kubeproof for kubectl's current context)",
			p.Name, p.Summary, goos)
	}
	return nil
}

// Request names a cluster: the provider and what it is made with. The
// engine and the tools on it pass it on and change what they must (a
// fault's shape, a release to bench) before making the provider.
type Request struct {
	Provider string
	// Why says why this cluster: the flag that named it, or the rule that
	// chose it ("invoked as kubectl kubeproof"); a run says it first.
	Why string
	Options
}

// New makes the provider the request names.
func (r Request) New() (cluster.Provider, error) {
	p, err := Lookup(r.Provider)
	if err != nil {
		return nil, err
	}
	if err := p.Usable(); err != nil {
		return nil, err
	}
	if r.Progress == nil {
		r.Progress = progress.Discard()
	}
	return p.new(r.Options)
}

// Makes reports whether the request's provider makes and removes its
// clusters (as opposed to using one that exists).
func (r Request) Makes() bool {
	p, err := Lookup(r.Provider)
	return err == nil && p.Makes
}

// LocalClusterDirs are the directories a local cluster of this name keeps
// on this machine: its data and its runtime state. Both are gone once the
// cluster is down (tests of the engine check that nothing is left).
func LocalClusterDirs(name string) []string {
	return []string{filepath.Join(local.DataRoot, name), filepath.Join(local.RunRoot, name)}
}
