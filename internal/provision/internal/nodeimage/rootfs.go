package nodeimage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kubeproof/kubeproof/internal/debpkg"
	"github.com/kubeproof/kubeproof/internal/progress"
)

// nodePackages are what a kind node runs besides Kubernetes and the
// container runtime (containerd and runc, built from Go modules like on the
// local provider): systemd as PID 1, the CNI plugins, and the tools kind's
// entrypoint, kubeadm and kube-proxy call.
var nodePackages = []string{
	"systemd", "dbus", "containernetworking-plugins",
	"iptables", "nftables", "conntrack", "iproute2", "ethtool", "socat",
	"util-linux", "mount", "kmod", "libseccomp2", "procps", "ca-certificates", "bash",
}

// builder is what building the root filesystem needs on the host.
var builder = []debpkg.Package{
	{Name: "debootstrap", File: "/usr/sbin/debootstrap"},
	{Name: "tar", File: "/usr/bin/tar"},
}

// rootfsTar returns a tarball of a bare root filesystem with the node
// packages, made by debootstrap from src and cached under cacheDir (it
// takes a minute or two; nothing of ours is in it). The cache is keyed on
// the distribution and suite, not on the mirror: every mirror of a suite
// serves the same packages.
func rootfsTar(ctx context.Context, cacheDir string, src Source, pr *progress.Printer) (string, error) {
	sum := sha256.Sum256([]byte(src.digestName() + "\n" + strings.Join(nodePackages, ",")))
	out := filepath.Join(cacheDir, "kind", fmt.Sprintf("rootfs-%s-%s.tar", strings.ReplaceAll(src.digestName(), "/", "-"), hex.EncodeToString(sum[:6])))
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := debpkg.Ensure(ctx, builder, pr); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", fmt.Errorf("create node image cache: %w", err)
	}
	dir, err := os.MkdirTemp(filepath.Dir(out), "rootfs-build-")
	if err != nil {
		return "", fmt.Errorf("create rootfs build directory: %w", err)
	}
	defer os.RemoveAll(dir)

	done := pr.Step("debootstrap %s with %d packages (once; cached in %s)", src, len(nodePackages), filepath.Dir(out))
	stop := pr.Ticker(30*time.Second, "running debootstrap", nil)
	err = run(ctx, "debootstrap", debootstrapArgs(src, dir, scriptExists)...)
	stop()
	done(err)
	if err != nil {
		return "", fmt.Errorf("debootstrap %s %s from %s: %w", src.Distribution, src.Suite, src.Mirror, err)
	}
	// Package caches and lists: the node never runs apt.
	for _, p := range []string{"var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man"} {
		if err := clearDir(filepath.Join(dir, p)); err != nil {
			return "", err
		}
	}
	tmp := out + ".partial"
	if err := run(ctx, "tar", "--numeric-owner", "--xattrs", "-C", dir, "-cf", tmp, "."); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("pack root filesystem: %w", err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", fmt.Errorf("pack root filesystem: %w", err)
	}
	return out, nil
}

// debootstrapScripts is where debootstrap keeps a script per suite.
const debootstrapScripts = "/usr/share/debootstrap/scripts"

func scriptExists(name string) bool {
	_, err := os.Stat(filepath.Join(debootstrapScripts, name))
	return err == nil
}

// fileExists is replaced in tests.
var fileExists = func(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// defaultKeyrings are the archive keyrings of each distribution, where
// debian-archive-keyring and ubuntu-keyring install them.
var defaultKeyrings = map[string]string{
	Debian: "/usr/share/keyrings/debian-archive-keyring.gpg",
	Ubuntu: "/usr/share/keyrings/ubuntu-archive-keyring.gpg",
}

// debootstrapArgs are debootstrap's arguments for src into dir. A
// debootstrap older than the suite has no script for it (Debian 12's
// 1.0.128 knows Ubuntu up to kinetic, not noble): every Ubuntu suite since
// 7.10 bootstraps with the script "gutsy", every Debian one with "sid".
// The release files are checked against the source's Signed-By keyring,
// else the distribution's archive keyring when it is installed.
func debootstrapArgs(src Source, dir string, haveScript func(string) bool) []string {
	args := []string{"--variant=minbase", "--components=" + strings.Join(src.Components, ","),
		"--include=" + strings.Join(nodePackages, ",")}
	keyring := src.Keyring
	if keyring == "" || !fileExists(keyring) {
		keyring = defaultKeyrings[src.Distribution]
	}
	if fileExists(keyring) {
		args = append(args, "--keyring="+keyring)
	}
	args = append(args, src.Suite, dir, src.Mirror)
	if !haveScript(src.Suite) {
		args = append(args, map[string]string{Debian: "sid", Ubuntu: "gutsy"}[src.Distribution])
	}
	return args
}

// source is where the root filesystem comes from: a Debian mirror named
// on the command line, else the machine's own apt sources.
func source(debianMirror string) (Source, error) {
	if debianMirror != "" {
		return DebianSource(debianMirror, "--debian-mirror"), nil
	}
	return chooseSource(readAptConfig("/"))
}

func clearDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("clean %s: %w", dir, err)
		}
	}
	return nil
}

// run runs a command and puts the end of its output in the error.
func run(ctx context.Context, name string, args ...string) error {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) > 6 {
			lines = lines[len(lines)-6:]
		}
		return fmt.Errorf("%s: %w: %s", name, err, strings.Join(lines, " | "))
	}
	return nil
}
