package cluster

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Opener returns the provider of a cluster, from its Info: a spec process
// uses it to reach abilities of the provider (starting an extra API
// server, say), or to learn what a cluster it did not make can do.
type Opener func(info *Info) (Provider, error)

// Only opening is here: making clusters is the provisioning side's
// (internal/provision), so the spec side stands on Info and on the
// openers provisioning registers (provision.RegisterOpeners).
var (
	openersMu sync.Mutex
	openers   = map[string]Opener{}
)

// RegisterOpener says how to open the named provider's clusters; a
// provider does it from its package's init. Registering a name twice is a
// programming error.
func RegisterOpener(provider string, open Opener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	if _, dup := openers[provider]; dup {
		panic(fmt.Sprintf("provider %q registered twice", provider))
	}
	openers[provider] = open
}

// Open returns the provider of the cluster info describes, for its
// abilities; ErrNoAbility when its provider has nothing to open.
func Open(info *Info) (Provider, error) {
	openersMu.Lock()
	open, ok := openers[info.Provider]
	names := make([]string, 0, len(openers))
	for n := range openers {
		names = append(names, n)
	}
	openersMu.Unlock()
	if !ok {
		sort.Strings(names)
		return nil, fmt.Errorf("unknown provider %q (known: %s)", info.Provider, strings.Join(names, ", "))
	}
	if open == nil {
		return nil, fmt.Errorf("provider %s: %w", info.Provider, ErrNoAbility)
	}
	return open(info)
}

// ErrNoAbility: the provider cannot do what was asked (it is not one of
// its abilities, found by interface on its Provider).
var ErrNoAbility = errors.New("the provider has no such ability")
