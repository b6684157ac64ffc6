package provision

import (
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/exitcode"
)

// Every provider of the table can be made and opened: the spec side
// reaches a provider's abilities only through cluster.Open.
func TestEveryProviderOpens(t *testing.T) {
	RegisterOpeners()
	if len(Providers()) < 3 {
		t.Fatalf("the table has %d providers", len(Providers()))
	}
	for _, p := range Providers() {
		if p.new == nil || p.open == nil || p.Summary == "" {
			t.Errorf("provider %s: its row lacks new, open or a summary", p.Name)
		}
		_, err := cluster.Open(&cluster.Info{Provider: p.Name, Name: "kubeproof-test-none"})
		if err != nil && strings.Contains(err.Error(), "unknown provider") {
			t.Errorf("provider %s: %v", p.Name, err)
		}
	}
}

// A request names its provider; an unknown one is a usage error that lists
// the known ones, and the options reach the provider.
func TestRequest(t *testing.T) {
	if _, err := (Request{Provider: "no-such-provider"}).New(); exitcode.Of(err) != exitcode.Usage ||
		!strings.Contains(err.Error(), "known: local, kind, kubeconfig") {
		t.Errorf("unknown provider: %v", err)
	}
	p, err := Request{Provider: "kubeconfig", Options: Options{Existing: Existing{Kubeconfig: "/nowhere", Context: "c"}}}.New()
	if err != nil || p.Name() != "kubeconfig" {
		t.Fatalf("kubeconfig provider: %v, %v", p, err)
	}
	if (Request{Provider: "kubeconfig"}).Makes() || !(Request{Provider: "local"}).Makes() {
		t.Error("Makes: the kubeconfig provider uses a cluster, the local one makes it")
	}
}
