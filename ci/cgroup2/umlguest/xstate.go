//go:build linux

package umlguest

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/internal/debpkg"
	"github.com/kubeproof/kubeproof/internal/exitcode"
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
// or "" where none is needed: not x86-64, or a CPU without AVX-512 and AMX,
// whose state fits UML's buffer (the guest ran there without it).
func buildXStatePreload(ctx context.Context, dir string, o Options) (string, error) {
	if runtime.GOARCH != "amd64" || !largeXState() {
		return "", nil
	}
	if err := debpkg.Ensure(ctx, preloadPackages, o.Progress); err != nil {
		return "", err
	}
	src, so := filepath.Join(dir, "xstate.c"), filepath.Join(dir, "xstate.so")
	if err := os.WriteFile(src, xstatePreload, 0o644); err != nil {
		return "", fmt.Errorf("write the XSAVE preload's source: %w", err)
	}
	if err := compilePreload(ctx, src, so); err != nil {
		// gcc and its headers were just ensured: the source is at fault.
		return "", exitcode.With(exitcode.Internal, err)
	}
	return so, nil
}

// compilePreload builds the preload's shared library, warnings as errors.
func compilePreload(ctx context.Context, src, so string) error {
	out, err := exec.CommandContext(ctx, "gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-o", so, src, "-ldl").CombinedOutput()
	if err != nil {
		return fmt.Errorf("compile the XSAVE preload for user-mode-linux: %w: %s", err, out)
	}
	return nil
}

// largeXState reports whether this CPU has AVX-512 or AMX, whose XSAVE
// state is larger than the buffer Debian's UML 6.1 keeps for it.
func largeXState() bool {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			flags := strings.Fields(v)
			return slices.Contains(flags, "avx512f") || slices.Contains(flags, "amx_tile")
		}
	}
	return false
}
