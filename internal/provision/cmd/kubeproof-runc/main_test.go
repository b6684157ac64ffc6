package main

import (
	"os"
	"path/filepath"
	"testing"
)

// The runc handed over to is $KUBEPROOF_RUNC (else the machine's) when it
// exists, else the first on PATH; none at all is an error.
func TestRuncPath(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "runc")
	if err := os.WriteFile(mine, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := runcPath(mine); err != nil || got != mine {
		t.Errorf("the override: %q, %v", got, err)
	}
	t.Setenv("PATH", dir)
	if got, err := runcPath(filepath.Join(dir, "gone")); err != nil || got != mine {
		t.Errorf("a missing override: %q, %v, want the one on PATH", got, err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := runcPath(filepath.Join(dir, "gone")); err == nil {
		t.Error("no runc anywhere: no error")
	}
}
