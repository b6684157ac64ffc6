// Package clusterflags declares, once, the flags that choose and shape the
// cluster a kubeproof command works on: their names and help, and for each
// whether it shapes a cluster kubeproof makes or sets an option only some
// providers read. The commands register them from here, and the check
// that refuses a flag its provider would ignore reads the same table.
package clusterflags

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision/create"
	"github.com/kubeproof/kubeproof/internal/provision/releases"
)

// Flag is one flag of the table.
type Flag struct {
	Name  string
	Usage string
	// usage, when set, makes the help when the flag is registered (from
	// the providers registered by then).
	usage func() string
	// Knob is the provider option the flag sets, if only some providers
	// read it.
	Knob create.Knob
	// Shapes: the flag shapes a cluster kubeproof makes, so a provider
	// that uses an existing cluster refuses it.
	Shapes bool
}

// The flags. Those with a Knob come first, then those that shape, in the
// order a refusal names them.
var (
	APIServerPort   = Flag{Name: "apiserver-port", Knob: create.KnobAPIServerPort, Usage: "kube-apiserver port (on the cluster's own host-side address; local provider)"}
	EtcdMembers     = Flag{Name: "etcd-members", Knob: create.KnobEtcdMembers, Usage: "etcd members, each a process of its own: 1 or 3 (local provider)"}
	AdmissionConfig = Flag{Name: "admission-control-config-file", Knob: create.KnobAdmissionConfig, Usage: "kube-apiserver's admission configuration (an AdmissionConfiguration), e.g. PodSecurity enforcing restricted by default: fixtures/admission/podsecurity-restricted.yaml (local provider)"}
	Workers         = Flag{Name: "workers", Knob: create.KnobWorkers, Usage: "worker nodes besides the control plane (kind provider)"}
	NodeImage       = Flag{Name: "node-image", Knob: create.KnobNodeImage, Usage: "kind node image to use instead of kubeproof's own, pulled if Docker lacks it; kubeproof's images and CNI plugins are put into its nodes (kind provider)"}
	DebianMirror    = Flag{Name: "debian-mirror", Knob: create.KnobDebianMirror, Usage: "Debian mirror to bootstrap the kind node image's root filesystem from, as Debian bookworm, e.g. http://HOST/debian ($KUBEPROOF_DEBIAN_MIRROR; default: this machine's apt sources: their Debian mirror, or on Ubuntu the archive of the machine's own release)"}
	Kubeconfig      = Flag{Name: "kubeconfig", Knob: create.KnobKubeconfig, Usage: "kubeconfig of an existing cluster (kubeconfig provider; default: as kubectl, $KUBECONFIG then ~/.kube/config)"}
	Context         = Flag{Name: "context", Knob: create.KnobContext, Usage: "kubeconfig context (kubeconfig provider)"}
	Disposable      = Flag{Name: "disposable", Knob: create.KnobDisposable, Usage: "nobody else uses the existing cluster: also run the specs that add Nodes, label real ones, compact etcd or bind roles in default (kubeconfig provider)"}

	ComponentArg      = Flag{Name: "component-arg", Shapes: true, Usage: "extra flag for a component, COMPONENT=--flag=value (repeatable), e.g. kube-apiserver=--anonymous-auth=false"}
	Without           = Flag{Name: "without", Shapes: true, usage: withoutUsage}
	PodCIDR           = Flag{Name: "pod-cidr", Shapes: true, Usage: "pod network of the cluster (routed to the node, never outside)"}
	ServiceCIDR       = Flag{Name: "service-cidr", Shapes: true, Usage: "Service ClusterIP range"}
	KubernetesVersion = Flag{Name: "kubernetes-version", Shapes: true}
	EtcdVersion       = Flag{Name: "etcd-version", Shapes: true}
	Name              = Flag{Name: "name", Shapes: true, Usage: "cluster name (providers that make clusters)"}
	LoadImages        = Flag{Name: "load-images", Shapes: true, Usage: "load the images the specs run into the nodes (false: the nodes pull them from --image-registry)"}

	Provider         = Flag{Name: "provider", usage: providerUsage}
	CacheDir         = Flag{Name: "cache-dir", Usage: "where built binaries and images are cached ($KUBEPROOF_CACHE_DIR)"}
	ImageRegistry    = Flag{Name: "image-registry", Usage: "registry the nodes pull the images the specs run from (host[:port][/path]); run pushes what is missing there first, up only sets the nodes up for it"}
	InsecureRegistry = Flag{Name: "insecure-registry", Usage: "--image-registry speaks plain HTTP (the nodes' containerd gets a mirror for it; on kind, a registry on 127.0.0.1 is reached at the nodes' gateway)"}
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

// String registers the flag as a string.
func (f Flag) String(fs *pflag.FlagSet, p *string, def string) {
	fs.StringVar(p, f.Name, def, f.Help())
}

// Int registers the flag as an int.
func (f Flag) Int(fs *pflag.FlagSet, p *int, def int) { fs.IntVar(p, f.Name, def, f.Help()) }

// Bool registers the flag as a bool.
func (f Flag) Bool(fs *pflag.FlagSet, p *bool, def bool) { fs.BoolVar(p, f.Name, def, f.Help()) }

// StringArray registers the flag as a repeatable string.
func (f Flag) StringArray(fs *pflag.FlagSet, p *[]string) {
	fs.StringArrayVar(p, f.Name, nil, f.Help())
}

// StringSlice registers the flag as a comma-separated list.
func (f Flag) StringSlice(fs *pflag.FlagSet, p *[]string) {
	fs.StringSliceVar(p, f.Name, nil, f.Help())
}

// Refuse returns a usage error for the first flag given (changed) that the
// provider would not read: an option of another provider, or a shape for
// a provider that uses an existing cluster. A flag is never silently
// ignored.
func Refuse(reg create.Registration, changed func(name string) bool) error {
	for _, f := range All {
		if f.Knob != "" && changed(f.Name) && !reg.ReadsKnob(f.Knob) {
			return exitcode.Errorf(exitcode.Usage, "--%s is not for the %s provider (%s)", f.Name, reg.Name, reg.Summary)
		}
	}
	if reg.Makes {
		return nil
	}
	for _, f := range All {
		if f.Shapes && changed(f.Name) {
			return exitcode.Errorf(exitcode.Usage, "--%s shapes a cluster kubeproof makes; the %s provider uses an existing one", f.Name, reg.Name)
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

// providerUsage describes the registered providers for --provider.
func providerUsage() string {
	var parts []string
	for _, r := range create.Registered() {
		parts = append(parts, fmt.Sprintf("%s (%s)", r.Name, r.Summary))
	}
	return "cluster provider: " + strings.Join(parts, ", ")
}

// withoutUsage lists the components providers can leave out.
func withoutUsage() string {
	var parts []string
	for _, r := range create.Registered() {
		if len(r.Optional) > 0 {
			parts = append(parts, r.Name+": "+strings.Join(r.Optional, ", "))
		}
	}
	return "leave a component out (" + strings.Join(parts, "; ") + ")"
}

// The defaults of the flags, which the commands register them with (they
// are provisioning's: the commands reach it only through here and the
// engine).
const (
	DefaultName    = create.DefaultName
	DefaultWorkers = create.DefaultWorkers
)

// DefaultCacheDir is --cache-dir's default ($KUBEPROOF_CACHE_DIR, else the
// user's cache directory).
func DefaultCacheDir() string { return create.DefaultCacheDir() }

// Releases registers --kubernetes-version and --etcd-version, with help
// that says what each command does with them; an empty etcd version means
// the one that goes with the Kubernetes release.
func Releases(fs *pflag.FlagSet, kubernetes, etcd *string, kubernetesHelp, etcdHelp string) {
	fs.StringVar(kubernetes, KubernetesVersion.Name, releases.DefaultKubernetesVersion,
		kubernetesHelp+" (tested: "+strings.Join(TestedMinors(), ", ")+")")
	fs.StringVar(etcd, EtcdVersion.Name, "", etcdHelp+" (default: the release that goes with --"+KubernetesVersion.Name+", "+
		releases.EtcdVersionFor(releases.DefaultKubernetesVersion)+" for "+releases.DefaultKubernetesVersion+")")
}

// DefaultReleases says which releases a cluster runs by default
// ("Kubernetes v1.37.2, etcd v3.7.3").
func DefaultReleases() string {
	return fmt.Sprintf("Kubernetes %s, etcd %s", releases.DefaultKubernetesVersion, releases.EtcdVersionFor(releases.DefaultKubernetesVersion))
}

// TestedMinors are the Kubernetes minor releases kubeproof is tested with,
// oldest first.
func TestedMinors() []string { return releases.SupportedKubernetesMinors() }

// ProviderNames are the values --provider takes.
func ProviderNames() []string { return create.Names() }
