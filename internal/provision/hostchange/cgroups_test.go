package hostchange

import (
	"os"
	"path/filepath"
	"testing"
)

// RemoveCgroup removes a tree of cgroups, children before parents, in every
// hierarchy.
func TestCgroupTreeRemoved(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if err := MakeCgroup("kubeproof-cgtest"); err != nil {
		t.Fatal(err)
	}
	roots, _ := CgroupMounts()
	for _, r := range roots {
		if err := os.MkdirAll(filepath.Join(r, "kubeproof-cgtest", "a", "b"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if errs := RemoveCgroup("kubeproof-cgtest"); len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, r := range roots {
		if _, err := os.Stat(filepath.Join(r, "kubeproof-cgtest")); err == nil {
			t.Fatalf("left %s", filepath.Join(r, "kubeproof-cgtest"))
		}
	}
}

// The three layouts a machine can have: this one (v1), a GitHub-hosted
// runner's (v2 only), and systemd's hybrid.
func TestCgroupLayout(t *testing.T) {
	v1 := []Mount{{Point: "/sys/fs/cgroup/cpu", FSType: "cgroup"}, {Point: "/sys/fs/cgroup/memory", FSType: "cgroup"}}
	v2 := []Mount{{Point: "/sys/fs/cgroup", FSType: "cgroup2"}}
	hybrid := append(append([]Mount{}, v1...), Mount{Point: "/sys/fs/cgroup/unified", FSType: "cgroup2"})
	for layout, ms := range map[string][]Mount{"v1": v1, "v2": v2, "hybrid": hybrid, "": {{Point: "/", FSType: "ext4"}}} {
		if got := CgroupLayout(ms); got != layout {
			t.Errorf("%v: %q, want %q", ms, got, layout)
		}
	}
	ms, err := Mounts()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("this machine: %s", CgroupLayout(ms))
}
