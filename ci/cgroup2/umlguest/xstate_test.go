//go:build linux

package umlguest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// The preload compiles, warnings as errors, before any guest boots on it.
func TestXStatePreloadCompiles(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the preload is for x86-64 hosts only")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc here: a guest's boot installs it (make e2e-cgroup2 compiles the preload then)")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "xstate.c")
	if err := os.WriteFile(src, xstatePreload, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := compilePreload(context.Background(), src, filepath.Join(dir, "xstate.so")); err != nil {
		t.Fatal(err)
	}
}
