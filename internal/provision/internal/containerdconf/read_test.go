package containerdconf

import (
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// kindV2 is the CRI part of kind's own node image configuration (kind
// v0.33's images/base/files/etc/containerd/config.toml), abridged.
const kindV2 = `version = 2

[plugins."io.containerd.grpc.v1.cri".containerd]
  discard_unpacked_layers = true
  snapshotter = "overlayfs"
  default_runtime_name = "runc"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
    SystemdCgroup = true

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  tolerate_missing_hugepages_controller = true
  restrict_oom_score_adj = false
`

// Read finds the settings in kind's version 2 configuration and in
// kubeproof's own version 3 one, and refuses the version 1 of containerd
// 1.4 and older.
func TestRead(t *testing.T) {
	s, err := Read(kindV2)
	if err != nil {
		t.Fatal(err)
	}
	if s != (Settings{Version: 2, Sandbox: "registry.k8s.io/pause:3.10"}) {
		t.Errorf("kind's configuration: %+v", s)
	}
	ours := "version = 3\n" + CRI{Snapshotter: "overlayfs", Sandbox: "kubeproof.local/pause:v1", RegistryConfigPath: "/etc/containerd/certs.d"}.Sections()
	s, err = Read(ours)
	if err != nil {
		t.Fatal(err)
	}
	if s != (Settings{Version: 3, RestrictOOMScoreAdj: true, RegistryConfigPath: "/etc/containerd/certs.d", Sandbox: "kubeproof.local/pause:v1", InternalLoopback: true}) {
		t.Errorf("kubeproof's configuration: %+v", s)
	}
	if _, err := Read("[plugins.cri]\n  x = 1\n"); err == nil {
		t.Error("a version 1 configuration: no error")
	}
	if _, err := Read("version = \n"); err == nil {
		t.Error("bad TOML: no error")
	}
}

// A patch merged into a configuration of its version sets what Read then
// reads back; an empty patch changes nothing.
func TestPatchReadsBack(t *testing.T) {
	for _, base := range []string{kindV2, "version = 3\n"} {
		before, err := Read(base)
		if err != nil {
			t.Fatal(err)
		}
		patch, err := Patch(before.Version, true, "/etc/containerd/certs.d")
		if err != nil {
			t.Fatal(err)
		}
		merged := merge(t, base, patch)
		after, err := Read(merged)
		if err != nil {
			t.Fatalf("%v\n%s", err, merged)
		}
		if !after.RestrictOOMScoreAdj || after.RegistryConfigPath != "/etc/containerd/certs.d" || after.Sandbox != before.Sandbox {
			t.Errorf("version %d patched: %+v\n%s", before.Version, after, patch)
		}
	}
	if p, err := Patch(2, false, ""); err != nil || p != "" {
		t.Errorf("nothing to set: %q, %v", p, err)
	}
	if _, err := Patch(1, true, ""); err == nil {
		t.Error("version 1: no error")
	}
}

// merge merges patch into base as a TOML merge patch (tables merge, values
// replace), the way kind applies containerdConfigPatches.
func merge(t *testing.T, base, patch string) string {
	t.Helper()
	var b, p map[string]any
	if _, err := toml.Decode(base, &b); err != nil {
		t.Fatal(err)
	}
	if _, err := toml.Decode(patch, &p); err != nil {
		t.Fatalf("the patch is not TOML: %v\n%s", err, patch)
	}
	var into func(dst, src map[string]any)
	into = func(dst, src map[string]any) {
		for k, v := range src {
			if sm, ok := v.(map[string]any); ok {
				dm, ok := dst[k].(map[string]any)
				if !ok {
					dm = map[string]any{}
					dst[k] = dm
				}
				into(dm, sm)
				continue
			}
			dst[k] = v
		}
	}
	into(b, p)
	var out strings.Builder
	if err := toml.NewEncoder(&out).Encode(b); err != nil {
		t.Fatal(err)
	}
	return out.String()
}
