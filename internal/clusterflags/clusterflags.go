// Package clusterflags declares, once, the flags that choose and shape the
// cluster a kubeproof command works on. Each row of the table says its
// name and help, which provider reads it (or that it shapes a cluster
// kubeproof makes), and which field of the provisioning request it sets:
// the commands register rows, and Values.Request turns what the user gave
// into the provision.Request the engine makes a provider from, refusing a
// flag the chosen provider would ignore. A new provider option is thus a
// field of its provider's options (internal/provision/internal/config) and
// a row here.
package clusterflags

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision"
)

// Values are what the cluster flags say: the request they fill in, and
// the flag values that become part of it only once checked.
type Values struct {
	provision.Request
	// ComponentArgs are --component-arg's COMPONENT=--flag=value.
	ComponentArgs []string
	// AdmissionConfigFile is --admission-control-config-file; the request
	// carries the file's content.
	AdmissionConfigFile string
	// LoadImages is --load-images (the request's Shape.SkipImageLoad is
	// its negation).
	LoadImages bool
	// Plugin: kubeproof runs as kubectl's plugin (kubectl kubeproof), so
	// the cluster it means is kubectl's current context.
	Plugin bool
}

// Flag is one flag of the table.
type Flag struct {
	Name  string
	Usage string
	// usage, when set, makes the help when the flag is registered.
	usage func() string
	// Provider is the one provider that reads the flag; it is refused for
	// the others. Empty: every provider it concerns.
	Provider string
	// Shapes: the flag shapes a cluster kubeproof makes, so a provider
	// that uses an existing cluster refuses it.
	Shapes bool
	// Global: registered on the root command, for every command.
	Global bool
	// bind registers the flag on fs, setting its field of v.
	bind func(fs *pflag.FlagSet, name, usage string, v *Values)
}

// The flags. Those of one provider come first, then those that shape, in
// the order a refusal names them.
var (
	APIServerPort = Flag{Name: "apiserver-port", Provider: "local", Usage: "kube-apiserver port (on the cluster's own host-side address; local provider)",
		bind: func(fs *pflag.FlagSet, n, u string, v *Values) { fs.IntVar(&v.Local.APIServerPort, n, 6443, u) }}
	EtcdMembers = Flag{Name: "etcd-members", Provider: "local", Usage: "etcd members, each a process of its own: 1 or 3 (local provider)",
		bind: func(fs *pflag.FlagSet, n, u string, v *Values) { fs.IntVar(&v.Local.EtcdMembers, n, 1, u) }}
	AdmissionConfig = Flag{Name: "admission-control-config-file", Provider: "local", Usage: "kube-apiserver's admission configuration (an AdmissionConfiguration), e.g. PodSecurity enforcing restricted by default: fixtures/admission/podsecurity-restricted.yaml (local provider)",
		bind: func(fs *pflag.FlagSet, n, u string, v *Values) { fs.StringVar(&v.AdmissionConfigFile, n, "", u) }}
	Workers = Flag{Name: "workers", Provider: "kind", Usage: "worker nodes besides the control plane (kind provider)",
		bind: func(fs *pflag.FlagSet, n, u string, v *Values) {
			fs.IntVar(&v.Kind.Workers, n, provision.DefaultWorkers, u)
		}}
	NodeImage = Flag{Name: "node-image", Provider: "kind", Usage: "kind node image to use instead of kubeproof's own, pulled if Docker lacks it; kubeproof's images and CNI plugins are put into its nodes (kind provider)",
		bind: func(fs *pflag.FlagSet, n, u string, v *Values) { fs.StringVar(&v.Kind.NodeImage, n, "", u) }}
	DebianMirror = Flag{Name: "debian-mirror", Provider: "kind", Usage: "Debian mirror to bootstrap the kind node image's root filesystem from, as Debian bookworm, e.g. http://HOST/debian ($KUBEPROOF_DEBIAN_MIRROR; default: this machine's apt sources: their Debian mirror, or on Ubuntu the archive of the machine's own release)",
		bind: func(fs *pflag.FlagSet, n, u string, v *Values) {
			fs.StringVar(&v.Kind.DebianMirror, n, os.Getenv("KUBEPROOF_DEBIAN_MIRROR"), u)
		}}
	Kubeconfig = Flag{Name: "kubeconfig", Provider: "kubeconfig", Global: true, Usage: "kubeconfig of an existing cluster: given, the run checks that cluster (kubeconfig provider; default: as kubectl, $KUBECONFIG then ~/.kube/config)",
		bind: func(fs *pflag.FlagSet, n, u string, v *Values) { fs.StringVar(&v.Existing.Kubeconfig, n, "", u) }}
	Context = Flag{Name: "context", Provider: "kubeconfig", Global: true, Usage: "kubeconfig context: given, the run checks that cluster (kubeconfig provider; default: the current context)",
		bind: func(fs *pflag.FlagSet, n, u string, v *Values) { fs.StringVar(&v.Existing.Context, n, "", u) }}
	Disposable = Flag{Name: "disposable", Provider: "kubeconfig", Global: true, Usage: "nobody else uses the existing cluster: also run the specs that add Nodes, label real ones, compact etcd or bind roles in default (kubeconfig provider)",
		bind: func(fs *pflag.FlagSet, n, u string, v *Values) { fs.BoolVar(&v.Existing.Disposable, n, false, u) }}

	ComponentArg = Flag{Name: "component-arg", Shapes: true, Usage: "extra flag for a component, COMPONENT=--flag=value (repeatable), e.g. kube-apiserver=--anonymous-auth=false",
		bind: func(fs *pflag.FlagSet, n, u string, v *Values) { fs.StringArrayVar(&v.ComponentArgs, n, nil, u) }}
	Without = Flag{Name: "without", Shapes: true, usage: withoutUsage,
		bind: func(fs *pflag.FlagSet, n, u string, v *Values) { fs.StringSliceVar(&v.Shape.Without, n, nil, u) }}
	PodCIDR = Flag{Name: "pod-cidr", Shapes: true, Usage: "pod network of the cluster (routed to the node, never outside)",
		bind: func(fs *pflag.FlagSet, n, u string, v *Values) { fs.StringVar(&v.Shape.PodCIDR, n, "10.244.0.0/16", u) }}
	ServiceCIDR = Flag{Name: "service-cidr", Shapes: true, Usage: "Service ClusterIP range",
		bind: func(fs *pflag.FlagSet, n, u string, v *Values) {
			fs.StringVar(&v.Shape.ServiceCIDR, n, "10.96.0.0/16", u)
		}}
	// The releases are registered with Releases, whose help says what the
	// command does with them.
	KubernetesVersion = Flag{Name: "kubernetes-version", Shapes: true}
	EtcdVersion       = Flag{Name: "etcd-version", Shapes: true}
	Name              = Flag{Name: "name", Shapes: true, Global: true, Usage: "cluster name (providers that make clusters)",
		bind: func(fs *pflag.FlagSet, n, u string, v *Values) {
			fs.StringVar(&v.Shape.Name, n, provision.DefaultName, u)
		}}
	LoadImages = Flag{Name: "load-images", Shapes: true, Usage: "load the images the specs run into the nodes (false: the nodes pull them from --image-registry)",
		bind: func(fs *pflag.FlagSet, n, u string, v *Values) { fs.BoolVar(&v.LoadImages, n, true, u) }}

	Provider = Flag{Name: "provider", Global: true, usage: providerUsage,
		bind: func(fs *pflag.FlagSet, n, u string, v *Values) { fs.StringVar(&v.Request.Provider, n, "", u) }}
	CacheDir = Flag{Name: "cache-dir", Global: true, Usage: "where built binaries and images are cached ($KUBEPROOF_CACHE_DIR)",
		bind: func(fs *pflag.FlagSet, n, u string, v *Values) {
			fs.StringVar(&v.Shape.CacheDir, n, provision.DefaultCacheDir(), u)
		}}
	ImageRegistry = Flag{Name: "image-registry", Usage: "registry the nodes pull the images the specs run from (host[:port][/path]); run pushes what is missing there first, up only sets the nodes up for it (default, for a cluster kubeproof did not make: $KUBEPROOF_IMAGE_REGISTRY, else the registry the release published them to, pulled from and never pushed to)",
		bind: func(fs *pflag.FlagSet, n, u string, v *Values) { fs.StringVar(&v.Shape.ImageRegistry, n, "", u) }}
	InsecureRegistry = Flag{Name: "insecure-registry", Usage: "--image-registry speaks plain HTTP (the nodes' containerd gets a mirror for it; on kind, a registry on 127.0.0.1 is reached at the nodes' gateway)",
		bind: func(fs *pflag.FlagSet, n, u string, v *Values) { fs.BoolVar(&v.Shape.InsecureRegistry, n, false, u) }}
)

// All is the table.
var All = []Flag{
	APIServerPort, EtcdMembers, AdmissionConfig, Workers, NodeImage, DebianMirror, Kubeconfig, Context, Disposable,
	ComponentArg, Without, PodCIDR, ServiceCIDR, KubernetesVersion, EtcdVersion, Name, LoadImages,
	Provider, CacheDir, ImageRegistry, InsecureRegistry,
}

// Help is the flag's help text.
func (f Flag) Help() string {
	if f.usage != nil {
		return f.usage()
	}
	return f.Usage
}

// Add registers the flag on fs, setting its field of v.
func (f Flag) Add(fs *pflag.FlagSet, v *Values) { f.bind(fs, f.Name, f.Help(), v) }

// AddGlobal registers the flags every command has (the root command's).
func AddGlobal(fs *pflag.FlagSet, v *Values) {
	for _, f := range All {
		if f.Global && f.bind != nil {
			f.Add(fs, v)
		}
	}
}

// AddShape registers the flags of a command that may make a cluster: the
// shape, each provider's own options, the registry its nodes pull from,
// and the releases (with kubernetesHelp and etcdHelp).
func AddShape(fs *pflag.FlagSet, v *Values, kubernetesHelp, etcdHelp string) {
	Releases(fs, v, kubernetesHelp, etcdHelp)
	for _, f := range All {
		if !f.Global && f.bind != nil {
			f.Add(fs, v)
		}
	}
}

// Build is the request the flags make: the provider chosen (Choose), a
// flag it would not read refused (given says which flags the user gave),
// --component-arg parsed, the admission configuration read, and for a
// cluster kubeproof did not make, the registry of its published images.
func (v *Values) Build(given func(name string) bool) (provision.Request, error) {
	v.Choose(given)
	p, err := provision.Lookup(v.Request.Provider)
	if err != nil {
		return provision.Request{}, err
	}
	if err := Refuse(p, v.Why, given); err != nil {
		return provision.Request{}, err
	}
	if err := p.Usable(); err != nil {
		return provision.Request{}, err
	}
	r := v.Request
	if r.Shape.ComponentArgs, err = ParseComponentArgs(v.ComponentArgs); err != nil {
		return provision.Request{}, err
	}
	if v.AdmissionConfigFile != "" {
		// The provider keeps its own copy: the cluster does not depend
		// on the file staying where it is.
		if r.Local.AdmissionConfig, err = os.ReadFile(v.AdmissionConfigFile); err != nil {
			return provision.Request{}, exitcode.Errorf(exitcode.Usage, "--%s: %v", AdmissionConfig.Name, err)
		}
	}
	r.Shape.SkipImageLoad = !v.LoadImages
	if !p.Makes && r.Shape.ImageRegistry == "" {
		r.Existing.Published = provision.PublishedImages()
	}
	return r, nil
}

// Choose settles which provider the flags mean, and says why: --provider
// when given; else the cluster that exists, kubectl's current context,
// when kubeproof runs as kubectl's plugin or is given --kubeconfig or
// --context, as kubectl and the tools beside it take it; else a local
// cluster, kubeproof's own job.
//
// The provider's flag defaults to nothing, so a provider already set was
// named; Choose is the same when called again.
func (v *Values) Choose(given func(name string) bool) {
	switch {
	case v.Request.Provider != "":
		// Named by --provider, or by the command (bench's --providers),
		// or chosen already.
		if v.Why == "" {
			v.Why = "--" + Provider.Name + " " + v.Request.Provider
		}
	case v.Plugin:
		v.Request.Provider, v.Why = provision.ExistingProvider, "invoked as kubectl kubeproof"
	case given(Kubeconfig.Name):
		v.Request.Provider, v.Why = provision.ExistingProvider, "--"+Kubeconfig.Name+" given"
	case given(Context.Name):
		v.Request.Provider, v.Why = provision.ExistingProvider, "--"+Context.Name+" given"
	default:
		v.Request.Provider, v.Why = provision.DefaultProvider, "the default without --provider, --kubeconfig or --context"
	}
}

// Refuse returns a usage error for the first flag given that the provider
// would not read: an option of another provider, or a shape for a
// provider that uses an existing cluster. A flag is never silently
// ignored. why says why the provider was chosen, when the user did not
// name it.
func Refuse(p provision.Provider, why string, given func(name string) bool) error {
	about := p.Summary
	var chosen string
	if why != "" && !strings.HasPrefix(why, "--"+Provider.Name) {
		chosen = fmt.Sprintf("chosen because %s: --%s names another", why, Provider.Name)
		about += "; " + chosen
	}
	for _, f := range All {
		if f.Provider != "" && f.Provider != p.Name && given(f.Name) {
			return exitcode.Errorf(exitcode.Usage, "--%s is not for the %s provider (%s)", f.Name, p.Name, about)
		}
	}
	if p.Makes {
		return nil
	}
	for _, f := range All {
		if f.Shapes && given(f.Name) {
			msg := fmt.Sprintf("--%s shapes a cluster kubeproof makes; the %s provider uses an existing one", f.Name, p.Name)
			if chosen != "" {
				msg += " (" + chosen + ")"
			}
			return exitcode.Errorf(exitcode.Usage, "%s", msg)
		}
	}
	return nil
}

// ParseComponentArgs turns --component-arg's "component=--flag=value"
// strings into a map.
func ParseComponentArgs(specs []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, s := range specs {
		comp, arg, ok := strings.Cut(s, "=")
		if !ok || comp == "" || !strings.HasPrefix(arg, "--") {
			return nil, exitcode.Errorf(exitcode.Usage, "--%s %q: want COMPONENT=--flag[=value], e.g. kube-apiserver=--anonymous-auth=false", ComponentArg.Name, s)
		}
		out[comp] = append(out[comp], arg)
	}
	return out, nil
}

// providerUsage describes the providers for --provider.
func providerUsage() string {
	var parts []string
	for _, p := range provision.Providers() {
		parts = append(parts, fmt.Sprintf("%s (%s)", p.Name, p.Summary))
	}
	return "cluster provider: " + strings.Join(parts, ", ") + " (default: kubeconfig, kubectl's current context, when run as kubectl kubeproof or given --kubeconfig or --context; else local)"
}

// withoutUsage lists the components providers can leave out.
func withoutUsage() string {
	var parts []string
	for _, p := range provision.Providers() {
		if len(p.Optional) > 0 {
			parts = append(parts, p.Name+": "+strings.Join(p.Optional, ", "))
		}
	}
	return "leave a component out (" + strings.Join(parts, "; ") + ")"
}

// Releases registers --kubernetes-version and --etcd-version, with help
// that says what each command does with them; an empty etcd version means
// the one that goes with the Kubernetes release.
func Releases(fs *pflag.FlagSet, v *Values, kubernetesHelp, etcdHelp string) {
	def := provision.DefaultKubernetesVersion
	fs.StringVar(&v.Shape.KubernetesVersion, KubernetesVersion.Name, def,
		kubernetesHelp+" (tested: "+strings.Join(provision.TestedMinors(), ", ")+")")
	fs.StringVar(&v.Shape.EtcdVersion, EtcdVersion.Name, "", etcdHelp+" (default: the release that goes with --"+KubernetesVersion.Name+", "+
		provision.EtcdVersionFor(def)+" for "+def+")")
}

// DefaultReleases says which releases a cluster runs by default
// ("Kubernetes v1.37.2, etcd v3.7.3").
func DefaultReleases() string {
	def := provision.DefaultKubernetesVersion
	return fmt.Sprintf("Kubernetes %s, etcd %s", def, provision.EtcdVersionFor(def))
}
