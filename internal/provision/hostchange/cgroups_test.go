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
