//go:build linux

package umlguest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kubeproof/kubeproof/internal/debpkg"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
)

// Options say how the guest is booted.
type Options struct {
	// Kernel is the user-mode-linux kernel (default: Debian's).
	Kernel string
	// Init is the guest's init, a program that calls Init when it runs as
	// PID 1 (default: this executable). The guest sees it at the same path.
	Init string
	// Memory is the guest's memory in the kernel's mem= syntax (default
	// 6G). It is the guest's own: its tmpfs, and the overlay's writable
	// layer, live in it.
	Memory string
	// Timeout bounds the guest's whole life (default 40 minutes).
	Timeout time.Duration
	// Console receives what the guest prints.
	Console io.Writer
	// Progress prints the steps.
	Progress *progress.Printer
}

// Kernel is where Debian's user-mode-linux package puts the kernel.
const Kernel = "/usr/bin/linux.uml"

// Packages are the Debian packages a guest needs on the host: the kernel
// (with its modules), and kmod, whose modprobe the guest's kernel calls to
// load a module on first use (bridge, veth, overlay, iptables' tables).
var Packages = []debpkg.Package{
	{Name: "user-mode-linux", File: Kernel},
	{Name: "kmod", File: "/usr/bin/kmod"},
	// The guest's kernel has no IPv4 nf_tables: iptables-legacy it is.
	{Name: "iptables", File: "/usr/sbin/iptables-legacy"},
}

// Boot starts a guest that runs spec and returns the command's exit code
// once the guest powered off. An error says the guest did not get to
// record one: it did not boot, was interrupted, or ran out of time; the
// guest's console, in o.Console, says more.
func Boot(ctx context.Context, spec Spec, o Options) (int, error) {
	if err := o.defaults(); err != nil {
		return 0, err
	}
	if !filepath.IsAbs(spec.Results) {
		return 0, exitcode.Errorf(exitcode.Usage, "the guest's results directory %q must be an absolute path (the guest mounts it at the same path)", spec.Results)
	}
	if err := debpkg.Ensure(ctx, Packages, o.Progress); err != nil {
		return 0, err
	}
	spec.Shared = append(spec.Shared, spec.Results)
	for _, d := range spec.Shared {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return 0, fmt.Errorf("create the shared directory %s: %w", d, err)
		}
	}
	exitFile := filepath.Join(spec.Results, ExitCodeFile)
	if err := os.Remove(exitFile); err != nil && !os.IsNotExist(err) {
		return 0, fmt.Errorf("remove an earlier guest's exit code: %w", err)
	}
	if spec.CPUMHz == "" {
		spec.CPUMHz = hostCPUMHz()
	}
	specFile := filepath.Join(spec.Results, "guest-spec.json")
	if err := writeSpec(specFile, spec); err != nil {
		return 0, err
	}

	args := []string{
		"mem=" + o.Memory,
		// The host's root, read-only: the guest writes to an overlay.
		"root=/dev/root", "rootfstype=hostfs", "rootflags=/", "ro",
		"init=" + o.Init,
		// The console is the kernel's standard output; it reads nothing.
		"con=null", "con0=null,fd:1",
		"quiet",
		specParam + "=" + specFile,
	}
	preloadDir, err := os.MkdirTemp("", "kubeproof-uml-")
	if err != nil {
		return 0, fmt.Errorf("create a directory for the guest kernel's preload: %w", err)
	}
	defer os.RemoveAll(preloadDir)
	preload, err := buildXStatePreload(ctx, preloadDir, o)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cmd := exec.Command(o.Kernel, args...)
	cmd.Stdout, cmd.Stderr = o.Console, o.Console
	if preload != "" {
		cmd.Env = append(os.Environ(), "LD_PRELOAD="+preload)
	}
	// The kernel's processes (one per guest address space) share its
	// process group, so that all go with it; and it goes with us.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	done := o.Progress.Step("booting a user-mode-linux guest (%s, mem=%s) to run %s", o.Kernel, o.Memory, strings.Join(spec.Command, " "))
	began := time.Now()
	if err := cmd.Start(); err != nil {
		done(err)
		return 0, exitcode.With(exitcode.MissingTool, fmt.Errorf("start %s: %w", o.Kernel, err))
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var waitErr error
	select {
	case waitErr = <-exited:
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		waitErr = <-exited // killed: the context's error says why
	}
	// Whatever of the kernel's processes outlived it.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if ctx.Err() != nil {
		err := ctx.Err()
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("the guest did not power off within %s (%v)", o.Timeout, waitErr)
		}
		done(err)
		return 0, err
	}
	data, err := os.ReadFile(exitFile)
	if err != nil {
		err = fmt.Errorf("the guest powered off (%v) without recording the command's exit code in %s: see its console above", waitErr, exitFile)
		done(err)
		return 0, err
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, fmt.Errorf("the guest's exit code file %s: %w", exitFile, err)
	}
	done(nil)
	o.Progress.Infof("the guest ran for %s; its command exited with %d", progress.Round(time.Since(began)), code)
	return code, nil
}

func (o *Options) defaults() error {
	if o.Kernel == "" {
		o.Kernel = Kernel
	}
	if o.Memory == "" {
		o.Memory = "6G"
	}
	if o.Timeout == 0 {
		o.Timeout = 40 * time.Minute
	}
	if o.Console == nil {
		o.Console = os.Stdout
	}
	if o.Progress == nil {
		o.Progress = progress.Discard()
	}
	if o.Init == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("locate this executable for the guest's init: %w", err)
		}
		o.Init = exe
	}
	if !filepath.IsAbs(o.Init) {
		return exitcode.Errorf(exitcode.Usage, "the guest's init %q must be an absolute path", o.Init)
	}
	return nil
}

// hostCPUMHz is this machine's CPU clock as /proc/cpuinfo says, for the
// guest's: its kernel prints none, and a kubelet refuses to start without
// one. "" when this machine says none either.
func hostCPUMHz() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "cpu MHz" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
