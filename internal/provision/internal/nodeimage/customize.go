package nodeimage

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/kubeproof/kubeproof/internal/provision/internal/containerdconf"

	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/internal/provision/internal/binaries"
)

// kindModulePath is the kind Go module; its images/base/files are the
// node's entrypoint, helper scripts and systemd units.
const kindModulePath = "sigs.k8s.io/kind"

// module is a Go module in the module cache.
type module struct {
	Version string
	Dir     string
}

// kindModule finds the kind module kubeproof is built with in the module
// cache (downloading it if the cache lacks it).
func kindModule(ctx context.Context) (module, error) {
	version := ""
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == kindModulePath {
				version = d.Version
				if d.Replace != nil {
					version = d.Replace.Version
				}
			}
		}
	}
	if version == "" {
		return module{}, fmt.Errorf("kubeproof was built without %s: cannot find kind's node files", kindModulePath)
	}
	out, err := exec.CommandContext(ctx, "go", "mod", "download", "-json", kindModulePath+"@"+version).Output()
	if err != nil {
		return module{}, fmt.Errorf("locate %s@%s in the module cache (needs Go): %w", kindModulePath, version, err)
	}
	var m module
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		return module{}, fmt.Errorf("locate %s@%s: unexpected go output %q", kindModulePath, version, out)
	}
	return m, nil
}

// Snapshotter is the node's containerd snapshotter, which images loaded into
// the node must be unpacked for.
const Snapshotter = "overlayfs"

// containerdConfig is the node's containerd configuration, for the
// containerd 2 built from Go modules (version 3; kind's own,
// images/base/files/etc/containerd/config.toml, is version 2, which
// containerd 2 migrates). On cgroup v1 hosts without CAP_SYS_RESOURCE
// containerd must not raise oom_score_adj.
var containerdConfig = "version = 3\n\n" + containerdconf.CRI{
	Snapshotter:           Snapshotter,
	DiscardUnpackedLayers: true,
	Sandbox:               images.Pause.Ref,
	// The kind provider writes a hosts.toml here for --image-registry.
	RegistryConfigPath: "/etc/containerd/certs.d",
	SystemdCgroup:      true,
	CNIBinDir:          "/opt/cni/bin",
	CNIConfDir:         "/etc/cni/net.d",
}.Sections()

// defaultStorage is kind's storage manifest for our nodes: the in-tree
// host-path provisioner (enabled in kube-controller-manager by the kind
// provider) behind a default "standard" class, as kind's own class is named.
const defaultStorage = `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: kubernetes.io/host-path
reclaimPolicy: Delete
volumeBindingMode: Immediate
`

// customize turns the bare root filesystem into a kind node, as kind's base
// image Dockerfile and node image builder do.
func customize(root, kindDir string, bin binaries.Set, version string) error {
	files := filepath.Join(kindDir, "images", "base", "files")
	if err := copyTree(files, root); err != nil {
		return fmt.Errorf("copy kind's base files: %w", err)
	}
	for _, f := range []string{"usr/local/bin/entrypoint", "usr/local/bin/clean-install"} {
		if err := os.Chmod(filepath.Join(root, f), 0o755); err != nil {
			return fmt.Errorf("chmod %s: %w", f, err)
		}
	}
	scripts, _ := filepath.Glob(filepath.Join(root, "kind", "bin", "*"))
	for _, s := range scripts {
		if err := os.Chmod(s, 0o755); err != nil {
			return fmt.Errorf("chmod %s: %w", s, err)
		}
	}
	// Trim systemd to what a container node needs (kind's Dockerfile).
	for _, pattern := range []string{
		"lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service",
		"lib/systemd/system/multi-user.target.wants/*",
		"etc/systemd/system/*.wants/*",
		"lib/systemd/system/local-fs.target.wants/*",
		"lib/systemd/system/sockets.target.wants/*udev*",
		"lib/systemd/system/sockets.target.wants/*initctl*",
		"lib/systemd/system/basic.target.wants/*",
	} {
		matches, _ := filepath.Glob(filepath.Join(root, pattern))
		for _, m := range matches {
			if err := os.Remove(m); err != nil {
				return fmt.Errorf("trim systemd: %w", err)
			}
		}
	}
	if err := appendFile(filepath.Join(root, "etc/systemd/journald.conf"), "ReadKMsg=no\n"); err != nil {
		return err
	}
	links := map[string]string{
		"usr/sbin/init": "/usr/lib/systemd/systemd",
		// kind's units and scripts expect kind's own build locations.
		"opt/cni/bin": "/usr/lib/cni",
		// Enabled units (systemctl enable) and a masked one.
		"etc/systemd/system/multi-user.target.wants/kubelet.service":          "/etc/systemd/system/kubelet.service",
		"etc/systemd/system/multi-user.target.wants/containerd.service":       "/etc/systemd/system/containerd.service",
		"etc/systemd/system/multi-user.target.wants/undo-mount-hacks.service": "/etc/systemd/system/undo-mount-hacks.service",
		"etc/systemd/system/systemd-binfmt.service":                           "/dev/null",
	}
	for link, target := range links {
		p := filepath.Join(root, link)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("create %s: %w", filepath.Dir(p), err)
		}
		_ = os.Remove(p)
		if err := os.Symlink(target, p); err != nil {
			return fmt.Errorf("link %s: %w", link, err)
		}
	}
	// The runtime where kind's units and scripts look for it.
	programs := map[string]string{
		"kubeadm": "usr/bin", "kubelet": "usr/bin", "kubectl": "usr/bin",
		"containerd": "usr/local/bin", "containerd-shim-runc-v2": "usr/local/bin", "ctr": "usr/local/bin",
		"runc": "usr/local/sbin",
	}
	for prog, dir := range programs {
		if err := copyFile(bin.Path(prog), filepath.Join(root, dir, prog), 0o755); err != nil {
			return err
		}
	}
	writes := map[string]string{
		"etc/containerd/config.toml":          containerdConfig,
		"kind/version":                        version,
		"kind/manifests/default-storage.yaml": defaultStorage,
	}
	for name, content := range writes {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("create %s: %w", filepath.Dir(p), err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	for _, d := range []string{"etc/kubernetes/manifests", "etc/cni/net.d", "var/lib/containerd"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return fmt.Errorf("create %s: %w", d, err)
		}
	}
	return nil
}

// copyTree copies regular files and directories from src into dst (module
// cache files are read-only; copies get ordinary modes).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		return copyFile(p, target, 0o644)
	})
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	_ = os.Remove(dst)
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return os.Chmod(dst, mode)
}

func appendFile(path, text string) error {
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if strings.Contains(string(data), text) {
		return nil
	}
	return os.WriteFile(path, append(data, []byte(text)...), 0o644)
}
