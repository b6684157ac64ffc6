package create

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
)

// The registry of providers lives here, on the provisioning side, because
// making a provider from options is what only the CLI does: a spec process
// gets a cluster's Info and reaches its provider's abilities through
// cluster.Open, which each provider also registers (cluster.RegisterOpener).

// Registration is one provider: how to make it, and what it offers. A
// provider registers itself from its package's init; a program has the
// providers it imports (kubeproof imports them all, see
// internal/provision/providers).
type Registration struct {
	// Name is the provider's name (what the CLI's --provider takes).
	Name string
	// Summary says in a few words what the provider's clusters are.
	Summary string
	// Makes: the provider makes and removes its clusters (otherwise it
	// uses one that exists, and Shape means nothing to it).
	Makes bool
	// Optional are the components a cluster can be made without
	// (Shape.Without).
	Optional []string
	// Reads are the provider-specific options it reads; setting others
	// for it is refused by whoever sets them.
	Reads []Knob
	// New makes the provider of the cluster opts describe.
	New func(opts Options) (cluster.Provider, error)
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

// New makes the named provider with the options.
func New(name string, opts ...Option) (cluster.Provider, error) {
	r, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	var o Options
	for _, set := range opts {
		set(&o)
	}
	if o.Progress == nil {
		o.Progress = progress.Discard()
	}
	return r.New(o)
}

// ReadsKnob reports whether the provider reads the knob.
func (r Registration) ReadsKnob(k Knob) bool { return slices.Contains(r.Reads, k) }
