package clusterflags

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision/create"
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
	existing := create.Registration{Name: "kubeconfig", Summary: "an existing cluster", Reads: []create.Knob{create.KnobKubeconfig}}
	makes := create.Registration{Name: "local", Summary: "processes on this machine", Makes: true, Reads: []create.Knob{create.KnobAPIServerPort}}
	given := func(names ...string) func(string) bool {
		return func(n string) bool { return slices.Contains(names, n) }
	}
	for _, c := range []struct {
		reg   create.Registration
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

// Each flag is declared once.
func TestNamesOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range All {
		if f.Name == "" || strings.HasPrefix(f.Name, "-") || seen[f.Name] {
			t.Errorf("flag %q: empty, dashed or declared twice", f.Name)
		}
		seen[f.Name] = true
	}
}
