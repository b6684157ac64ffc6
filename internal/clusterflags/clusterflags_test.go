package clusterflags

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision"
)

func TestParseComponentArgs(t *testing.T) {
	got, err := ParseComponentArgs([]string{"kube-apiserver=--anonymous-auth=false", "kube-apiserver=--v=4", "kubelet=--v=2"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got["kube-apiserver"], []string{"--anonymous-auth=false", "--v=4"}) || !slices.Equal(got["kubelet"], []string{"--v=2"}) {
		t.Fatalf("got %v", got)
	}
	for _, bad := range []string{"kube-apiserver", "kube-apiserver=anonymous-auth=false", "=--v=1"} {
		if _, err := ParseComponentArgs([]string{bad}); exitcode.Of(err) != exitcode.Usage {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// A flag is refused by the provider that does not read it, in the words
// the CLI has always used; the ones it reads pass.
func TestRefuse(t *testing.T) {
	existing, err := provision.Lookup("kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	makes, err := provision.Lookup("local")
	if err != nil {
		t.Fatal(err)
	}
	given := func(names ...string) func(string) bool {
		return func(n string) bool { return slices.Contains(names, n) }
	}
	for _, c := range []struct {
		reg   provision.Provider
		flags []string
		want  string
	}{
		{existing, []string{"kubeconfig"}, ""},
		{existing, []string{"workers"}, "--workers is not for the kubeconfig provider (an existing cluster)"},
		{existing, []string{"pod-cidr"}, "--pod-cidr shapes a cluster kubeproof makes; the kubeconfig provider uses an existing one"},
		{makes, []string{"apiserver-port", "pod-cidr", "name"}, ""},
		{makes, []string{"context"}, "--context is not for the local provider (processes on this machine)"},
	} {
		err := Refuse(c.reg, given(c.flags...))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %v: %v", c.reg.Name, c.flags, err)
		case c.want != "" && (err == nil || err.Error() != c.want || exitcode.Of(err) != exitcode.Usage):
			t.Errorf("%s %v: got %v, want %q (usage)", c.reg.Name, c.flags, err, c.want)
		}
	}
}

// The flags build the request the user meant: values land in the fields
// of the provider that reads them, --load-images false skips the load, and
// a flag given for another provider is refused before anything is made.
func TestBuild(t *testing.T) {
	var v Values
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	AddGlobal(fs, &v)
	AddShape(fs, &v, "k", "e")
	if err := fs.Parse([]string{"--provider", "kind", "--workers", "3", "--load-images=false", "--component-arg", "kubelet=--v=4", "--name", "x"}); err != nil {
		t.Fatal(err)
	}
	given := func(n string) bool { return fs.Lookup(n).Changed }
	r, err := v.Build(given)
	if err != nil {
		t.Fatal(err)
	}
	if r.Provider != "kind" || r.Kind.Workers != 3 || !r.Shape.SkipImageLoad || r.Shape.Name != "x" ||
		!slices.Equal(r.Shape.ComponentArgs["kubelet"], []string{"--v=4"}) || r.Shape.KubernetesVersion != provision.DefaultKubernetesVersion {
		t.Errorf("request %+v", r)
	}
	if err := fs.Parse([]string{"--etcd-members", "3"}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Build(given); err == nil || err.Error() != "--etcd-members is not for the kind provider (Docker containers, made with kind)" {
		t.Errorf("a local flag for kind: %v", err)
	}
}

// Each flag is declared once, and every one but the releases (registered
// with their commands' own help) binds a field.

func TestNamesOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range All {
		if f.Name == "" || strings.HasPrefix(f.Name, "-") || seen[f.Name] {
			t.Errorf("flag %q: empty, dashed or declared twice", f.Name)
		}
		seen[f.Name] = true
		if f.bind == nil && f.Name != KubernetesVersion.Name && f.Name != EtcdVersion.Name {
			t.Errorf("flag %q sets nothing", f.Name)
		}
	}
}
