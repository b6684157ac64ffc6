//go:build linux

package umlguest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// SetupFailed is the exit code Init records when the guest could not be set
// up, so the command never ran.
const SetupFailed = 125

// Guest does a guest's part when this process has one, and reports whether
// it had: as PID 1 with the spec parameter in its environment it is the
// guest's init (Init, which does not return); run by systemd after the
// command's service stopped, it records the command's exit code.
func Guest() bool {
	switch {
	case os.Getpid() == 1 && os.Getenv(specParam) != "":
		Init()
	case os.Getenv(recordParam) != "":
		if err := recordServiceExit(os.Getenv(recordParam)); err != nil {
			fmt.Fprintf(os.Stderr, "guest: record the command's exit code: %v\n", err)
			os.Exit(1)
		}
		return true
	}
	return false
}

// guestPath is the PATH of the guest's init and of the command.
const guestPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/go/bin"

// Init sets the guest up, runs the spec's command, records its exit code
// in the results directory and powers the guest off. It does not return.
func Init() {
	os.Setenv("PATH", guestPath)
	code := SetupFailed
	spec, err := readSpec(os.Getenv(specParam))
	var results *os.File
	if err == nil {
		// The results directory is opened before anything is mounted
		// over the path it has, so that the exit code reaches it even
		// when the set-up fails half-way.
		results, err = openResults(spec.Results)
	}
	if err == nil {
		err = setup(spec)
	}
	if err == nil && spec.Systemd {
		err = bootSystemd(spec) // returns only if it could not
	}
	if err == nil {
		code, err = run(spec)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "guest: %v\n", err)
	}
	if results != nil {
		if err := writeAt(results, ExitCodeFile, strconv.Itoa(code)+"\n"); err != nil {
			fmt.Fprintf(os.Stderr, "guest: record the exit code: %v\n", err)
		}
	}
	unix.Sync()
	_ = unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	select {} // the kernel stops us
}

// openResults mounts the host's results directory in /dev (the kernel's
// devtmpfs, the one writable place of a read-only root) and opens it: an
// open directory keeps its mount alive after the mount is detached with
// the old root.
func openResults(dir string) (*os.File, error) {
	const early = "/dev/.umlguest-results"
	if err := (mount{source: "none", target: early, fstype: "hostfs", data: dir}).do(); err != nil {
		return nil, err
	}
	f, err := os.Open(early)
	if err != nil {
		return nil, fmt.Errorf("open the results directory: %w", err)
	}
	return f, nil
}

// writeAt writes a file in the directory dir.
func writeAt(dir *os.File, name, content string) error {
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	_, err = f.WriteString(content)
	return err
}

// mount is one mount Init makes.
type mount struct {
	source, target, fstype, data string
	flags                        uintptr
}

func (m mount) do() error {
	if err := os.MkdirAll(m.target, 0o755); err != nil {
		return fmt.Errorf("create mount point %s: %w", m.target, err)
	}
	if err := unix.Mount(m.source, m.target, m.fstype, m.flags, m.data); err != nil {
		return fmt.Errorf("mount %s on %s: %w", m.fstype, m.target, err)
	}
	return nil
}

func mountAll(ms ...mount) error {
	for _, m := range ms {
		if err := m.do(); err != nil {
			return err
		}
	}
	return nil
}

// setup turns the kernel's bare read-only root into a machine a cluster can
// run on: a writable overlay over the host's root (every host path but
// /run and /dev/shm shows through), the usual kernel file systems, cgroup
// v2 alone at /sys/fs/cgroup, module loading, the legacy iptables, a CPU
// clock in /proc/cpuinfo, and the shared directories.
func setup(spec Spec) error {
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		return fmt.Errorf("uname: %w", err)
	}
	release := unix.ByteSliceToString(uts.Release[:])
	if err := mountAll(
		mount{source: "proc", target: "/proc", fstype: "proc"},
		mount{source: "sysfs", target: "/sys", fstype: "sysfs"},
		mount{source: "tmpfs", target: "/tmp", fstype: "tmpfs", data: "size=75%"},
	); err != nil {
		return err
	}
	// The overlay's module first, from the kernel package's own module
	// tree (the host's /lib/modules is for its own kernel, if any).
	modroot := "/tmp/modroot"
	if err := linkModules(modroot+"/lib/modules", release); err != nil {
		return err
	}
	if out, err := exec.Command("modprobe", "-d", modroot, "overlay").CombinedOutput(); err != nil {
		return fmt.Errorf("load overlay: %w: %s", err, bytes.TrimSpace(out))
	}
	for _, d := range []string{"/tmp/root/upper", "/tmp/root/work"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := mountAll(mount{source: "overlay", target: "/tmp/root/merged", fstype: "overlay",
		data: "lowerdir=/,upperdir=/tmp/root/upper,workdir=/tmp/root/work"}); err != nil {
		return err
	}
	if err := os.MkdirAll("/tmp/root/merged/.oldroot", 0o700); err != nil {
		return err
	}
	if err := unix.PivotRoot("/tmp/root/merged", "/tmp/root/merged/.oldroot"); err != nil {
		return fmt.Errorf("pivot_root into the overlay: %w", err)
	}
	if err := os.Chdir("/"); err != nil {
		return err
	}
	// The old root's mounts (the overlay holds what it needs of them).
	if err := unix.Unmount("/.oldroot", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the old root: %w", err)
	}
	_ = os.Remove("/.oldroot")
	if err := mountAll(
		mount{source: "proc", target: "/proc", fstype: "proc"},
		mount{source: "sysfs", target: "/sys", fstype: "sysfs"},
		mount{source: "devtmpfs", target: "/dev", fstype: "devtmpfs"},
		mount{source: "devpts", target: "/dev/pts", fstype: "devpts", data: "newinstance,ptmxmode=0666"},
		mount{source: "tmpfs", target: "/dev/shm", fstype: "tmpfs"},
		mount{source: "tmpfs", target: "/run", fstype: "tmpfs", data: "mode=755"},
		// /tmp stays the overlay's: the host's /tmp (a checkout there, the
		// programs the command runs) shows through, what the guest
		// writes stays in its memory.
		// cgroup v2 alone, as a machine booted with the unified hierarchy.
		mount{source: "cgroup2", target: "/sys/fs/cgroup", fstype: "cgroup2"},
	); err != nil {
		return err
	}
	if err := linkModules("/lib/modules", release); err != nil {
		return err
	}
	modprobe, err := exec.LookPath("modprobe")
	if err != nil {
		return fmt.Errorf("modprobe: %w (Debian's kmod)", err)
	}
	if err := os.WriteFile("/proc/sys/kernel/modprobe", []byte(modprobe), 0o644); err != nil {
		return fmt.Errorf("set the kernel's modprobe: %w", err)
	}
	for _, m := range spec.Modules {
		if out, err := exec.Command(modprobe, m).CombinedOutput(); err != nil {
			return fmt.Errorf("load module %s: %w: %s", m, err, bytes.TrimSpace(out))
		}
	}
	// This kernel's nf_tables has no IPv4 family; its x_tables work.
	for _, tool := range []string{"iptables", "ip6tables"} {
		legacy := "/usr/sbin/" + tool + "-legacy"
		if out, err := exec.Command("update-alternatives", "--set", tool, legacy).CombinedOutput(); err != nil {
			return fmt.Errorf("switch %s to %s: %w: %s", tool, legacy, err, bytes.TrimSpace(out))
		}
	}
	if err := cpuinfoWithClock(spec.CPUMHz); err != nil {
		return err
	}
	if err := unix.Sethostname([]byte("kubeproof-guest")); err != nil {
		return fmt.Errorf("set the host name: %w", err)
	}
	// Loopback is the guest's only network: what a machine's local
	// addresses are delivered through.
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		return fmt.Errorf("bring loopback up: %w: %s", err, bytes.TrimSpace(out))
	}
	for _, d := range spec.Scratch {
		if err := (mount{source: "tmpfs", target: d, fstype: "tmpfs", data: "mode=755"}).do(); err != nil {
			return err
		}
	}
	for _, d := range spec.Shared {
		if err := (mount{source: "none", target: d, fstype: "hostfs", data: d}).do(); err != nil {
			return fmt.Errorf("share %s: %w", d, err)
		}
	}
	return describe(spec.Results)
}

// linkModules makes dir/<release> point at the kernel package's modules.
func linkModules(dir, release string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	target := filepath.Join("/usr/lib/uml/modules", release)
	if _, err := os.Stat(target); err != nil {
		return fmt.Errorf("the kernel's modules: %w", err)
	}
	link := filepath.Join(dir, release)
	if _, err := os.Lstat(link); err == nil {
		return nil
	}
	return os.Symlink(target, link)
}

// cpuinfoWithClock puts a copy of /proc/cpuinfo with a "cpu MHz" line in
// each processor's block over the original.
func cpuinfoWithClock(mhz string) error {
	orig, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return err
	}
	if bytes.Contains(orig, []byte("cpu MHz")) {
		return nil
	}
	if mhz == "" {
		return errors.New("the guest's /proc/cpuinfo has no cpu MHz line, which a kubelet needs, and the host gave none")
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(orig))
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "model name") {
			out.WriteString("cpu MHz\t\t: " + mhz + "\n")
		}
	}
	copyFile := "/run/umlguest-cpuinfo"
	if err := os.WriteFile(copyFile, out.Bytes(), 0o444); err != nil {
		return err
	}
	if err := unix.Mount(copyFile, "/proc/cpuinfo", "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind a cpuinfo with a clock: %w", err)
	}
	return nil
}

// describe prints, and writes to results/guest.txt, what the guest is: its
// kernel, its mounts (cgroup2 the only cgroup one) and the controllers of
// the cgroup v2 root.
func describe(results string) error {
	var b strings.Builder
	var uts unix.Utsname
	_ = unix.Uname(&uts)
	fmt.Fprintf(&b, "kernel: %s %s\n", unix.ByteSliceToString(uts.Sysname[:]), unix.ByteSliceToString(uts.Release[:]))
	mounts, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return err
	}
	b.WriteString("mounts:\n")
	for _, line := range strings.Split(strings.TrimSpace(string(mounts)), "\n") {
		b.WriteString("  " + line + "\n")
	}
	controllers, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers")
	if err != nil {
		return fmt.Errorf("read the cgroup v2 root's controllers: %w", err)
	}
	fmt.Fprintf(&b, "/sys/fs/cgroup/cgroup.controllers: %s", controllers)
	fmt.Fprint(os.Stdout, "guest: "+strings.ReplaceAll(strings.TrimSuffix(b.String(), "\n"), "\n", "\nguest: ")+"\n")
	return os.WriteFile(filepath.Join(results, "guest.txt"), []byte(b.String()), 0o644)
}

// run starts the command and, as PID 1, reaps every process that ends
// until the command itself has; its exit code is returned.
func run(spec Spec) (int, error) {
	env := append([]string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/go/bin",
		"HOME=/root",
	}, spec.Env...)
	dir := spec.Dir
	if dir == "" {
		dir = "/"
	}
	path, err := exec.LookPath(spec.Command[0])
	if err != nil {
		return SetupFailed, err
	}
	proc, err := os.StartProcess(path, spec.Command, &os.ProcAttr{
		Dir: dir, Env: env, Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
	})
	if err != nil {
		return SetupFailed, fmt.Errorf("start %s: %w", spec.Command[0], err)
	}
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return SetupFailed, fmt.Errorf("wait for %s: %w", spec.Command[0], err)
		}
		if pid != proc.Pid {
			continue // an orphan of the command, reaped
		}
		switch {
		case ws.Exited():
			return ws.ExitStatus(), nil
		case ws.Signaled():
			return 128 + int(ws.Signal()), nil
		}
	}
}
