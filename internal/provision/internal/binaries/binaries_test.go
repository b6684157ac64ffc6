package binaries

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/modfile"

	"github.com/kubeproof/kubeproof/internal/exitcode"
)

const upstreamGoMod = `module k8s.io/kubernetes

go 1.26.0

godebug default=go1.26

require (
	k8s.io/api v0.0.0
	k8s.io/sample-cli-plugin v0.0.0
)

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/sample-cli-plugin => ./staging/src/k8s.io/sample-cli-plugin
	example.com/fork => example.com/other v1.0.0
)
`

func TestKubernetesWrapperGoMod(t *testing.T) {
	out, err := kubernetesWrapperGoMod([]byte(upstreamGoMod), "v1.36.3")
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse("go.mod", out, nil)
	if err != nil {
		t.Fatalf("generated go.mod does not parse: %v\n%s", err, out)
	}
	if f.Go == nil || f.Go.Version != "1.26.0" {
		t.Errorf("go directive not copied: %+v", f.Go)
	}
	if len(f.Godebug) != 1 || f.Godebug[0].Key != "default" || f.Godebug[0].Value != "go1.26" {
		t.Errorf("godebug not copied: %+v", f.Godebug)
	}
	replaced := map[string]string{}
	for _, r := range f.Replace {
		replaced[r.Old.Path] = r.New.Path + "@" + r.New.Version
	}
	if replaced["k8s.io/api"] != "k8s.io/api@v0.36.3" {
		t.Errorf("k8s.io/api => %q, want the published staging module v0.36.3", replaced["k8s.io/api"])
	}
	if _, ok := replaced["k8s.io/sample-cli-plugin"]; ok {
		t.Error("the unpublished sample-cli-plugin must not be replaced")
	}
	if _, ok := replaced["example.com/fork"]; ok {
		t.Error("only ./staging replacements are carried over")
	}
	if len(f.Tool) != len(KubernetesCommands) {
		t.Errorf("%d tool directives, want %d", len(f.Tool), len(KubernetesCommands))
	}
}

func TestWrapperRejectsChangedLayout(t *testing.T) {
	if _, err := kubernetesWrapperGoMod([]byte("module k8s.io/kubernetes\n\ngo 1.26\n"), "v1.36.3"); err == nil {
		t.Fatal("a go.mod without staging replacements must be an error")
	}
}

func TestVersions(t *testing.T) {
	if v, err := stagingVersion("v1.36.3"); err != nil || v != "v0.36.3" {
		t.Fatalf("stagingVersion = %q, %v", v, err)
	}
	for _, bad := range []string{"1.36.3", "v1.36", "latest", "v2.0.0"} {
		if _, err := stagingVersion(bad); err == nil {
			t.Errorf("stagingVersion(%q) accepted", bad)
		}
	}
	flags := versionLDFlags("v1.36.3", time.Date(2026, 7, 22, 18, 7, 38, 0, time.UTC))
	for _, want := range []string{
		"k8s.io/component-base/version.gitVersion=v1.36.3",
		"k8s.io/client-go/pkg/version.gitMinor=36",
		"k8s.io/component-base/version.buildDate=2026-07-22T18:07:38Z",
	} {
		if !strings.Contains(flags, want) {
			t.Errorf("ldflags lack %s: %s", want, flags)
		}
	}
}

func TestEtcdWrapperGoMod(t *testing.T) {
	f, err := modfile.Parse("go.mod", wrapperGoMod("etcd", "v3.6.16", EtcdCommands, ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Require) != 2 || len(f.Tool) != 2 {
		t.Fatalf("requires %d, tools %d; want 2 and 2", len(f.Require), len(f.Tool))
	}
}

// The CNI plugins are commands in subdirectories of one module without a
// major version element: the wrapper requires that module once.
func TestCNIPluginsWrapperGoMod(t *testing.T) {
	f, err := modfile.Parse("go.mod", wrapperGoMod("cni-plugins", DefaultCNIPluginsVersion, CNIPlugins, CNIPluginsModule), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Require) != 1 || f.Require[0].Mod.Path != CNIPluginsModule || f.Require[0].Mod.Version != DefaultCNIPluginsVersion || len(f.Tool) != len(CNIPlugins) {
		t.Fatalf("requires %+v, %d tools", f.Require, len(f.Tool))
	}
}

// Without a Go toolchain and without a cache, the error says so and carries
// the MissingTool exit code.
func TestEnsureWithoutGo(t *testing.T) {
	_, err := Ensure(context.Background(), Options{CacheDir: t.TempDir(), Go: "kubeproof-no-such-go"})
	if err == nil {
		t.Fatal("expected an error")
	}
	if exitcode.Of(err) != exitcode.MissingTool {
		t.Fatalf("exit code %v, want MissingTool: %v", exitcode.Of(err), err)
	}
	if !strings.Contains(err.Error(), "no Go toolchain") {
		t.Fatalf("message does not name the missing toolchain: %v", err)
	}
}

func TestEnsureRejectsBadVersion(t *testing.T) {
	_, err := Ensure(context.Background(), Options{CacheDir: t.TempDir(), KubernetesVersion: "latest"})
	if exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("exit code %v, want Usage: %v", exitcode.Of(err), err)
	}
}

func TestBuildProgressEstimatesWhatIsLeft(t *testing.T) {
	for _, c := range []struct {
		compiled, planned int64
		elapsed           time.Duration
		want              string
	}{
		{10, 2400, time.Minute, "10 packages compiled"},
		{600, 2400, 3 * time.Minute, "600 of about 2400 packages compiled, about 9m left"},
		{2390, 2400, 10 * time.Minute, "2390 of about 2400 packages compiled, under a minute left"},
		{2500, 2400, 10 * time.Minute, "2500 packages compiled, linking"},
		{50, 0, time.Minute, "50 packages compiled"},
	} {
		if got := buildProgress(c.compiled, c.planned, c.elapsed); got != c.want {
			t.Errorf("buildProgress(%d, %d, %s) = %q, want %q", c.compiled, c.planned, c.elapsed, got, c.want)
		}
	}
}

// A release the proxy does not have is the user's input to fix; a proxy that
// cannot be reached is not.
func TestNotServed(t *testing.T) {
	for msg, want := range map[string]bool{
		"download k8s.io/kubernetes@v1.99.0: reading https://proxy/k8s.io/kubernetes/@v/v1.99.0.info: 403 Forbidden": true,
		"download k8s.io/kubernetes@v1.99.0: k8s.io/kubernetes@v1.99.0: invalid version: unknown revision v1.99.0":   true,
		"download k8s.io/kubernetes@v1.37.2: dial tcp 10.0.0.1:443: connect: connection refused":                     false,
	} {
		if got := notServed(errors.New(msg)); got != want {
			t.Errorf("notServed(%q) = %v, want %v", msg, got, want)
		}
	}
}
