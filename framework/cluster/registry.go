package cluster

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
)

// Options are what a provider is made with. Every provider reads Shape (if
// it makes clusters) and Progress; the others are named after the flags
// that set them and concern the providers that list them in Flags.
type Options struct {
	Shape    Shape
	Progress *progress.Printer
	// Kubeconfig and Context name an existing cluster (--kubeconfig,
	// --context).
	Kubeconfig string
	Context    string
	// Disposable: the existing cluster is used by nobody else
	// (--disposable), so specs that disturb other users may run.
	Disposable bool
	// APIServerPort is the API server's port on this machine
	// (--apiserver-port).
	APIServerPort int
	// EtcdMembers is how many members etcd has (--etcd-members).
	EtcdMembers int
	// AdmissionConfig is the API server's admission configuration, an
	// AdmissionConfiguration (--admission-control-config-file).
	AdmissionConfig []byte
	// Workers are the nodes besides the control plane (--workers).
	Workers int
	// NodeImage is a node image to use instead of kubeproof's own
	// (--node-image).
	NodeImage string
	// DebianMirror is where kubeproof's node image gets its Debian root
	// filesystem (--debian-mirror); empty: the machine's apt sources decide
	// (Debian bookworm, or an Ubuntu machine's own release).
	DebianMirror string
}

// Registration is one provider: how to make it, and what it offers. A
// provider registers itself from its package's init; a program has the
// providers it imports (kubeproof imports them all, see
// internal/provision/providers).
type Registration struct {
	// Name is the value of --provider.
	Name string
	// Summary says in a few words what the provider's clusters are.
	Summary string
	// Makes: the provider makes and removes its clusters (otherwise it
	// uses one that exists, and Shape means nothing to it).
	Makes bool
	// Optional are the components a cluster can be made without
	// (--without).
	Optional []string
	// Flags are the provider-specific flags it reads: apiserver-port,
	// workers, node-image, debian-mirror, kubeconfig, context. Others given to it are a
	// usage error.
	Flags []string
	// New makes the provider of the cluster opts describe.
	New func(opts Options) (Provider, error)
	// Open returns the provider of a cluster it made, from its info: a
	// spec process uses it to reach abilities of the provider (starting
	// an extra API server, say). Nil if it has none to offer.
	Open func(info *Info) (Provider, error)
}

var (
	registryMu sync.Mutex
	registry   = map[string]Registration{}
)

// Register adds a provider. Registering a name twice is a programming
// error.
func Register(r Registration) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[r.Name]; dup {
		panic(fmt.Sprintf("provider %q registered twice", r.Name))
	}
	registry[r.Name] = r
}

// Registered returns the registrations, by name.
func Registered() []Registration {
	registryMu.Lock()
	defer registryMu.Unlock()
	out := make([]Registration, 0, len(registry))
	for _, r := range registry {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names returns the registered providers' names, sorted.
func Names() []string {
	var out []string
	for _, r := range Registered() {
		out = append(out, r.Name)
	}
	return out
}

// Lookup returns the named provider's registration; an unknown name is a
// usage error that lists the known ones.
func Lookup(name string) (Registration, error) {
	registryMu.Lock()
	r, ok := registry[name]
	registryMu.Unlock()
	if !ok {
		return r, exitcode.Errorf(exitcode.Usage, "unknown provider %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return r, nil
}

// New makes the named provider.
func New(name string, opts Options) (Provider, error) {
	r, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	if opts.Progress == nil {
		opts.Progress = progress.Discard()
	}
	return r.New(opts)
}

// Open returns the provider of the cluster info describes, for its
// abilities; ErrNoAbility when its provider has nothing to open.
func Open(info *Info) (Provider, error) {
	r, err := Lookup(info.Provider)
	if err != nil {
		return nil, err
	}
	if r.Open == nil {
		return nil, fmt.Errorf("provider %s: %w", info.Provider, ErrNoAbility)
	}
	return r.Open(info)
}

// ErrNoAbility: the provider cannot do what was asked (it is not one of
// its abilities, found by interface on its Provider).
var ErrNoAbility = fmt.Errorf("the provider has no such ability")

// Accepts reports whether the provider reads the provider-specific flag.
func (r Registration) Accepts(flag string) bool { return slices.Contains(r.Flags, flag) }
