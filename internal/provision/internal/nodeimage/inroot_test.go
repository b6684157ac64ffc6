package nodeimage

import (
	"os"
	"path/filepath"
	"testing"
)

// A file added to the node image follows the node's own links: an absolute
// link is resolved inside the root, never on this machine.
func TestInRoot(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"usr/lib/cni", "opt/cni"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/usr/lib/cni", filepath.Join(root, "opt/cni/bin")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../lib", filepath.Join(root, "usr/lib64")); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		"/opt/cni/bin/kubeproof-cni-trace": "usr/lib/cni/kubeproof-cni-trace",
		"/usr/lib64/cni/x":                 "lib/cni/x",
		"/etc/new/file":                    "etc/new/file",
	} {
		got, err := inRoot(root, p)
		if err != nil {
			t.Fatalf("inRoot(%s): %v", p, err)
		}
		if got != filepath.Join(root, want) {
			t.Errorf("inRoot(%s) = %s, want %s", p, got, filepath.Join(root, want))
		}
	}
	if err := os.Symlink("/loop", filepath.Join(root, "loop")); err != nil {
		t.Fatal(err)
	}
	if _, err := inRoot(root, "/loop/x"); err == nil {
		t.Error("inRoot of a link to itself: no error")
	}
}
