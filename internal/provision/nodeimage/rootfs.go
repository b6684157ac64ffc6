package nodeimage

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision/debpkg"
)

// suite is the Debian release of the node's root filesystem. kind's own
// base is newer (trixie, systemd 257, which refuses cgroup v1); bookworm's
// systemd 252 boots on the cgroup v1 hosts kubeproof runs on.
const suite = "bookworm"

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

// rootfsTar returns a tarball of a bare bookworm root filesystem with the
// node packages, made by debootstrap from mirror (or the machine's own apt
// mirror) and cached under cacheDir (it takes a minute or two; nothing of
// ours is in it). The cache is not keyed on the mirror: every mirror serves
// the same packages.
func rootfsTar(ctx context.Context, cacheDir, mirror string, pr *progress.Printer) (string, error) {
	sum := sha256.Sum256([]byte(suite + "\n" + strings.Join(nodePackages, ",")))
	out := filepath.Join(cacheDir, "kind", fmt.Sprintf("rootfs-%s-%s.tar", suite, hex.EncodeToString(sum[:6])))
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := debpkg.Ensure(ctx, builder, pr); err != nil {
		return "", err
	}
	if mirror == "" {
		var err error
		if mirror, err = aptMirror(suite); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", fmt.Errorf("create node image cache: %w", err)
	}
	dir, err := os.MkdirTemp(filepath.Dir(out), "rootfs-build-")
	if err != nil {
		return "", fmt.Errorf("create rootfs build directory: %w", err)
	}
	defer os.RemoveAll(dir)

	done := pr.Step("debootstrap %s with %d packages (once; cached in %s)", suite, len(nodePackages), filepath.Dir(out))
	stop := pr.Ticker(30*time.Second, "running debootstrap", nil)
	err = run(ctx, "debootstrap", "--variant=minbase", "--components=main",
		"--include="+strings.Join(nodePackages, ","), suite, dir, mirror)
	stop()
	done(err)
	if err != nil {
		return "", fmt.Errorf("debootstrap %s from %s: %w", suite, mirror, err)
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

// aptMirror finds the machine's own Debian mirror for suite in its apt
// sources (deb822 .sources files or one-line .list files).
func aptMirror(suite string) (string, error) {
	files, _ := filepath.Glob("/etc/apt/sources.list.d/*.sources")
	lists, _ := filepath.Glob("/etc/apt/sources.list.d/*.list")
	files = append(files, lists...)
	files = append(files, "/etc/apt/sources.list")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var uri string
		if strings.HasSuffix(f, ".sources") {
			uri = mirrorFromDeb822(string(data), suite)
		} else {
			uri = mirrorFromList(string(data), suite)
		}
		if uri != "" {
			return uri, nil
		}
	}
	return "", exitcode.Errorf(exitcode.MissingTool, "no apt source for Debian %s main found in /etc/apt: the kind node image is built from one; name a Debian mirror with --debian-mirror", suite)
}

// mirrorFromDeb822 returns the URI of the first stanza that has type deb,
// suite and component main.
func mirrorFromDeb822(text, suite string) string {
	for _, stanza := range strings.Split(text, "\n\n") {
		fields := map[string][]string{}
		sc := bufio.NewScanner(strings.NewReader(stanza))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			k, v, ok := strings.Cut(line, ":")
			if ok {
				fields[strings.ToLower(strings.TrimSpace(k))] = strings.Fields(v)
			}
		}
		if slices.Contains(fields["types"], "deb") && slices.Contains(fields["suites"], suite) &&
			slices.Contains(fields["components"], "main") && len(fields["uris"]) > 0 {
			return fields["uris"][0]
		}
	}
	return ""
}

// mirrorFromList reads one-line entries: deb [options] URI suite components...
func mirrorFromList(text, suite string) string {
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || f[0] != "deb" {
			continue
		}
		f = f[1:]
		if strings.HasPrefix(f[0], "[") {
			for len(f) > 0 && !strings.HasSuffix(f[0], "]") {
				f = f[1:]
			}
			if len(f) == 0 {
				continue
			}
			f = f[1:]
		}
		if len(f) >= 3 && f[1] == suite && slices.Contains(f[2:], "main") {
			return f[0]
		}
	}
	return ""
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
