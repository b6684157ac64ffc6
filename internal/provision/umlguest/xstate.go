package umlguest

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision/debpkg"
)

// xstatePreload is a library preloaded into the guest's kernel on x86-64.
// Debian's user-mode-linux 6.1 hands the host a buffer for a thread's
// XSAVE state of a fixed size; on a CPU whose state is larger (AVX-512 and
// AMX: Sapphire Rapids and later) the host refuses it with EFAULT and the
// guest panics at boot ("ptrace set fp regs failed, errno = 14"). The
// library gives the host a buffer of its size, UML's part (x87, SSE, AVX)
// over the thread's current state. The directory holds C only, so it is
// not a Go package.
//
//go:embed preload/xstate.c
var xstatePreload []byte

// preloadPackages build the preload.
var preloadPackages = []debpkg.Package{
	{Name: "gcc", File: "/usr/bin/gcc"},
	{Name: "libc6-dev", File: "/usr/include/x86_64-linux-gnu/sys/uio.h"},
}

// buildXStatePreload compiles the preload into dir and returns its path,
// or "" where none is needed (not x86-64).
func buildXStatePreload(ctx context.Context, dir string, o Options) (string, error) {
	if runtime.GOARCH != "amd64" {
		return "", nil
	}
	if err := debpkg.Ensure(ctx, preloadPackages, o.Progress); err != nil {
		return "", err
	}
	src, so := filepath.Join(dir, "xstate.c"), filepath.Join(dir, "xstate.so")
	if err := os.WriteFile(src, xstatePreload, 0o644); err != nil {
		return "", fmt.Errorf("write the XSAVE preload's source: %w", err)
	}
	out, err := exec.CommandContext(ctx, "gcc", "-O2", "-Wall", "-shared", "-fPIC", "-o", so, src, "-ldl").CombinedOutput()
	if err != nil {
		return "", exitcode.With(exitcode.MissingTool, fmt.Errorf("compile the XSAVE preload for user-mode-linux: %w: %s", err, out))
	}
	return so, nil
}
