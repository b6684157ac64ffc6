package providers

import (
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/internal/provision/create"
)

// Every provider kubeproof can make registers how its clusters are opened
// too (the spec side reaches a provider's abilities only that way).
func TestEveryProviderOpens(t *testing.T) {
	names := create.Names()
	if len(names) == 0 {
		t.Fatal("no provider registered")
	}
	for _, n := range names {
		_, err := cluster.Open(&cluster.Info{Provider: n, Name: "kubeproof-test-none"})
		if err != nil && strings.Contains(err.Error(), "unknown provider") {
			t.Errorf("provider %s: %v", n, err)
		}
	}
}
