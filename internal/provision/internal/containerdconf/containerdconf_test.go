package containerdconf

import (
	"testing"

	"github.com/BurntSushi/toml"
)

// The sections parse as TOML, with the keys where containerd 2 reads them,
// and an empty shim or runc path leaves containerd's own lookup.
func TestSectionsParse(t *testing.T) {
	for _, c := range []CRI{
		{Snapshotter: "overlayfs", Sandbox: "p:1", RegistryConfigPath: "/r", CNIBinDir: "/b", CNIConfDir: "/c", SystemdCgroup: true},
		{Snapshotter: "overlayfs", Sandbox: "p:1", RegistryConfigPath: "/r", CNIBinDir: "/b", CNIConfDir: "/c", ShimPath: "/s/shim", RuncPath: "/s/runc", RuncRoot: "/run/x"},
	} {
		var conf map[string]any
		if _, err := toml.Decode("version = 3\n"+c.Sections(), &conf); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		plugins := conf["plugins"].(map[string]any)
		img := plugins["io.containerd.cri.v1.images"].(map[string]any)
		if img["pinned_images"].(map[string]any)["sandbox"] != "p:1" {
			t.Errorf("sandbox image: %v", img)
		}
		rt := plugins["io.containerd.cri.v1.runtime"].(map[string]any)
		if rt["restrict_oom_score_adj"] != true {
			t.Error("restrict_oom_score_adj must be set")
		}
		if cni := rt["cni"].(map[string]any); cni["use_internal_loopback"] != true {
			t.Errorf("%+v: cni %v: lo must be set up by containerd, not by the loopback plugin", c, cni)
		}
		runc := rt["containerd"].(map[string]any)["runtimes"].(map[string]any)["runc"].(map[string]any)
		opts := runc["options"].(map[string]any)
		if opts["SystemdCgroup"] != c.SystemdCgroup || (runc["runtime_path"] != nil) != (c.ShimPath != "") || (opts["BinaryName"] != nil) != (c.RuncPath != "") {
			t.Errorf("%+v: runc runtime %v", c, runc)
		}
	}
}
