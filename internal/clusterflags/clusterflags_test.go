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
		err := Refuse(c.reg, "--provider "+c.reg.Name, given(c.flags...))
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

// The cluster a user means: --provider when given; kubectl's current
// context for kubectl's plugin and for --kubeconfig or --context alone;
// a local cluster otherwise. Each says why, and a flag the chosen provider
// would not read says why that provider was chosen.
func TestChoose(t *testing.T) {
	t.Setenv(provision.RegistryEnv, "")
	for _, c := range []struct {
		plugin       bool
		args         []string
		provider     string
		why          string
		refusal      string
		publishedReg string
	}{
		{args: nil, provider: "local", why: "the default without --provider, --kubeconfig or --context"},
		{args: []string{"--provider", "kind"}, provider: "kind", why: "--provider kind"},
		{args: []string{"--kubeconfig", "/k"}, provider: "kubeconfig", why: "--kubeconfig given"},
		{args: []string{"--context", "c"}, provider: "kubeconfig", why: "--context given"},
		{plugin: true, provider: "kubeconfig", why: "invoked as kubectl kubeproof"},
		{plugin: true, args: []string{"--provider", "local"}, provider: "local", why: "--provider local"},
		{args: []string{"--provider", "local", "--kubeconfig", "/k"},
			refusal: "--kubeconfig is not for the local provider (processes on this machine)"},
		{plugin: true, args: []string{"--etcd-members", "3"},
			refusal: "--etcd-members is not for the kubeconfig provider (an existing cluster; chosen because invoked as kubectl kubeproof: --provider names another)"},
		{args: []string{"--kubeconfig", "/k", "--pod-cidr", "10.9.0.0/16"},
			refusal: "--pod-cidr shapes a cluster kubeproof makes; the kubeconfig provider uses an existing one (chosen because --kubeconfig given: --provider names another)"},
	} {
		var v Values
		v.Plugin = c.plugin
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		AddGlobal(fs, &v)
		AddShape(fs, &v, "k", "e")
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		r, err := v.Build(func(n string) bool { return fs.Lookup(n).Changed })
		if c.refusal != "" {
			if err == nil || err.Error() != c.refusal || exitcode.Of(err) != exitcode.Usage {
				t.Errorf("plugin=%v %v: got %v, want the usage error %q", c.plugin, c.args, err, c.refusal)
			}
			continue
		}
		if err != nil || r.Provider != c.provider || r.Why != c.why {
			t.Errorf("plugin=%v %v: got %q (%q), %v; want %q (%q)", c.plugin, c.args, r.Provider, r.Why, err, c.provider, c.why)
		}
		// Commands build the request more than once (matrix, down --all).
		if again, err := v.Build(func(n string) bool { return fs.Lookup(n).Changed }); err != nil || again.Provider != r.Provider || again.Why != r.Why {
			t.Errorf("plugin=%v %v again: got %q (%q), %v", c.plugin, c.args, again.Provider, again.Why, err)
		}
	}
	// A command that names the provider itself (bench's --providers).
	var v Values
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	AddGlobal(fs, &v)
	AddShape(fs, &v, "k", "e")
	v.Plugin, v.Request.Provider, v.Why = true, "kind", "--providers kind"
	if r, err := v.Build(func(n string) bool { return fs.Lookup(n).Changed }); err != nil || r.Provider != "kind" {
		t.Errorf("bench's kind: got %q, %v", r.Provider, err)
	}
}

// A cluster kubeproof did not make pulls the images from where they are
// published ($KUBEPROOF_IMAGE_REGISTRY here; a release names its own) when
// the run pushes none; --image-registry pushes there instead, and a
// cluster kubeproof makes has them loaded.
func TestPublishedImages(t *testing.T) {
	t.Setenv(provision.RegistryEnv, "127.0.0.1:5999/kp/")
	build := func(args ...string) provision.Request {
		t.Helper()
		var v Values
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		AddGlobal(fs, &v)
		AddShape(fs, &v, "k", "e")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		r, err := v.Build(func(n string) bool { return fs.Lookup(n).Changed })
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if reg, _, push, from := build("--kubeconfig", "/k").Images(); reg != "127.0.0.1:5999/kp" || push || from != "$"+provision.RegistryEnv {
		t.Errorf("kubeconfig: %q push=%v from %q", reg, push, from)
	}
	if reg, _, push, from := build("--kubeconfig", "/k", "--image-registry", "127.0.0.1:5998/x").Images(); reg != "127.0.0.1:5998/x" || !push || from != "--image-registry" {
		t.Errorf("--image-registry: %q push=%v from %q", reg, push, from)
	}
	if reg, _, _, _ := build().Images(); reg != "" {
		t.Errorf("local: pulls from %q, want its images loaded", reg)
	}
}
