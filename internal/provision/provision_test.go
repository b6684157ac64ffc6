package provision

import (
	"os"
	"path/filepath"
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

// The providers that run clusters with Linux's namespaces, cgroups and
// mounts refuse another system in one line that says what works there;
// the kubeconfig provider works anywhere.
func TestLinuxProvidersRefuseElsewhere(t *testing.T) {
	defer func(was string) { goos = was }(goos)
	goos = "darwin"
	for _, name := range []string{"local", "kind"} {
		_, err := Request{Provider: name}.New()
		if exitcode.Of(err) != exitcode.Usage || err == nil || strings.Contains(err.Error(), "\n") ||
			!strings.Contains(err.Error(), "the "+name+" provider") || !strings.Contains(err.Error(), "needs Linux, not darwin") {
			t.Errorf("%s on darwin: %v", name, err)
		}
	}
	if _, err := (Request{Provider: "kubeconfig"}).New(); err != nil {
		t.Errorf("kubeconfig on darwin: %v", err)
	}
}

// A run's first line names the cluster as the user knows it (the
// kubeconfig's context and file, the server) and why it was chosen.
func TestDescribe(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- {name: c, cluster: {server: "https://127.0.0.1:36443"}}
contexts:
- {name: kind-x, context: {cluster: c, user: u}}
- {name: other, context: {cluster: c, user: u}}
current-context: kind-x
users:
- {name: u, user: {token: t}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	for _, c := range []struct {
		r    Request
		want string
	}{
		{Request{Provider: "kubeconfig", Why: "invoked as kubectl kubeproof"},
			`kubectl's current context "kind-x" in ` + kubeconfig + ` (https://127.0.0.1:36443; invoked as kubectl kubeproof)`},
		{Request{Provider: "kubeconfig", Why: "--context given", Options: Options{Existing: Existing{Context: "other"}}},
			`context "other" in ` + kubeconfig + ` (https://127.0.0.1:36443; --context given)`},
		{Request{Provider: "local", Why: "the default", Options: Options{Shape: Shape{Name: "kubeproof"}}},
			`local cluster "kubeproof", processes on this machine (the default)`},
	} {
		if got := c.r.Describe(); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}
