package nodeimage

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/internal/provision/internal/binaries"
	"github.com/kubeproof/kubeproof/internal/provision/internal/imagebuild"
)

// Repository is the image repository kubeadm is told to use in kind nodes
// (ClusterConfiguration.imageRepository). No registry answers to it: every
// image kubeadm asks for is in the node image already.
const Repository = "kubeproof.local"

// component is one image a kind node needs before its first Pod: the
// control plane, kube-proxy, CoreDNS and the sandbox (pause) image.
type component struct {
	// Ref is the reference kubeadm uses.
	Ref string
	// Binary is the program on this machine, packed at Dest.
	Binary, Dest string
	// Entrypoint is the image's entrypoint (kubeadm's manifests give most
	// components a command; CoreDNS relies on the entrypoint).
	Entrypoint []string
	// WithIptables adds the iptables programs and their libraries from the
	// node's root filesystem: kube-proxy runs them.
	WithIptables bool
}

// kubeadmImages asks kubeadm which images a cluster of version needs from
// Repository.
func kubeadmImages(ctx context.Context, kubeadm, version string) ([]string, error) {
	return KubeadmImages(ctx, kubeadm, version, Repository)
}

// KubeadmImages asks kubeadm which images a cluster of version needs from
// repository.
func KubeadmImages(ctx context.Context, kubeadm, version, repository string) ([]string, error) {
	out, err := exec.CommandContext(ctx, kubeadm, "config", "images", "list",
		"--kubernetes-version", version, "--image-repository", repository).Output()
	if err != nil {
		return nil, fmt.Errorf("kubeadm config images list: %w", err)
	}
	return strings.Fields(string(out)), nil
}

// components maps kubeadm's image list to programs of ours. Every image in
// the list must be provided: a node that lacks one would try to pull it.
func components(ctx context.Context, refs []string, bin binaries.Set, opts Options) ([]component, error) {
	var out []component
	for _, ref := range refs {
		repo, tag, ok := strings.Cut(strings.TrimPrefix(ref, Repository+"/"), ":")
		if !ok {
			return nil, fmt.Errorf("kubeadm image %q has no tag", ref)
		}
		c := component{Ref: ref}
		switch repo {
		case "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy":
			c.Binary, c.Dest = bin.Path(repo), "/usr/local/bin/"+repo
			c.WithIptables = repo == "kube-proxy"
		case "etcd":
			// kubeadm names its etcd release in the tag; the program is the
			// etcd release kubeproof is configured with (same minor).
			c.Binary, c.Dest = bin.Path("etcd"), "/usr/local/bin/etcd"
		case "coredns":
			p, err := binaries.EnsureCoreDNS(ctx, binaries.Options{CacheDir: opts.CacheDir, Progress: opts.Progress}, tag)
			if err != nil {
				return nil, err
			}
			c.Binary, c.Dest = p, "/coredns"
		case "pause":
			dir, err := imagebuild.ProgramDir()
			if err != nil {
				return nil, err
			}
			c.Binary, c.Dest = filepath.Join(dir, images.Pause.Program), "/pause"
		default:
			return nil, fmt.Errorf("kubeadm wants image %s, which kubeproof cannot build", ref)
		}
		c.Entrypoint = []string{c.Dest}
		out = append(out, c)
	}
	// containerd's sandbox image in our node configuration.
	for _, c := range out {
		if strings.HasPrefix(c.Ref, Repository+"/pause:") {
			p := c
			p.Ref = images.Pause.Ref
			out = append(out, p)
			break
		}
	}
	return out, nil
}

// image composes a component's image; rootfs is the node's root
// filesystem (for kube-proxy's iptables).
func (c component) image(rootfs string) (v1.Image, error) {
	data, err := os.ReadFile(c.Binary)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", c.Ref, err)
	}
	var layers [][]imagebuild.File
	if c.WithIptables {
		base, err := packageFiles(rootfs, "iptables", "conntrack")
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", c.Ref, err)
		}
		layers = append(layers, base)
	}
	layers = append(layers, []imagebuild.File{{Path: "/tmp/", Mode: 0o1777}, {Path: c.Dest, Mode: 0o755, Data: data}})
	return imagebuild.Compose(layers, v1.Config{
		Entrypoint: c.Entrypoint,
		Env:        []string{"PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin"},
		WorkingDir: "/",
	})
}

// packageFiles collects, from the root filesystem at root, the files of
// the named Debian packages and of everything they depend on (per dpkg's
// status file), plus the alternatives symlinks that point at them, and the
// merged-/usr top-level links.
func packageFiles(root string, pkgs ...string) ([]imagebuild.File, error) {
	deps, err := dpkgDepends(filepath.Join(root, "var/lib/dpkg/status"))
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	var visit func(string)
	visit = func(p string) {
		if want[p] {
			return
		}
		if _, ok := deps[p]; !ok {
			return // virtual or not installed
		}
		want[p] = true
		for _, d := range deps[p] {
			visit(d)
		}
	}
	for _, p := range pkgs {
		visit(p)
	}
	paths := map[string]bool{}
	for p := range want {
		list, err := packageList(root, p)
		if err != nil {
			return nil, err
		}
		for _, f := range list {
			paths[f] = true
		}
	}
	// Debian picks iptables-nft or -legacy through /etc/alternatives:
	// /usr/sbin/iptables -> /etc/alternatives/iptables -> iptables-nft.
	alts, _ := os.ReadDir(filepath.Join(root, "etc/alternatives"))
	chosen := map[string]bool{}
	for _, a := range alts {
		target, err := os.Readlink(filepath.Join(root, "etc/alternatives", a.Name()))
		if err == nil && paths[target] {
			chosen["/etc/alternatives/"+a.Name()] = true
			paths["/etc/alternatives/"+a.Name()] = true
		}
	}
	for _, dir := range []string{"/usr/sbin", "/usr/bin"} {
		entries, _ := os.ReadDir(filepath.Join(root, dir))
		for _, e := range entries {
			if target, err := os.Readlink(filepath.Join(root, dir, e.Name())); err == nil && chosen[target] {
				paths[dir+"/"+e.Name()] = true
			}
		}
	}
	sorted := make([]string, 0, len(paths))
	for p := range paths {
		sorted = append(sorted, p)
	}
	slices.Sort(sorted)
	files := []imagebuild.File{}
	// bookworm's merged /usr: /bin, /sbin, /lib and /lib64 are links.
	for _, l := range []string{"bin", "sbin", "lib", "lib64"} {
		if target, err := os.Readlink(filepath.Join(root, l)); err == nil {
			files = append(files, imagebuild.File{Path: "/" + l, Link: target, Mode: 0o777})
		}
	}
	for _, p := range sorted {
		if p == "/." || p == "/" {
			continue
		}
		full := filepath.Join(root, p)
		info, err := os.Lstat(full)
		if err != nil {
			continue // listed but not shipped (dpkg diversions, docs we removed)
		}
		// Entries below a top-level link are stored under its target.
		dest := resolveTop(root, p)
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(full)
			if err != nil {
				return nil, fmt.Errorf("read link %s: %w", full, err)
			}
			files = append(files, imagebuild.File{Path: dest, Link: target, Mode: 0o777})
		case info.IsDir():
			if !isTopLink(root, p) {
				files = append(files, imagebuild.File{Path: dest + "/", Mode: int64(info.Mode().Perm())})
			}
		case info.Mode().IsRegular():
			data, err := os.ReadFile(full)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", full, err)
			}
			files = append(files, imagebuild.File{Path: dest, Mode: int64(info.Mode().Perm()), Data: data})
		}
	}
	return files, nil
}

// resolveTop rewrites a path under a top-level symlink (/lib/x with /lib ->
// usr/lib) to the real location, so the layer holds no entry below a link.
func resolveTop(root, p string) string {
	parts := strings.SplitN(strings.TrimPrefix(p, "/"), "/", 2)
	if len(parts) == 2 {
		if target, err := os.Readlink(filepath.Join(root, parts[0])); err == nil && !strings.HasPrefix(target, "/") {
			return path.Join("/", target, parts[1])
		}
	}
	return p
}

func isTopLink(root, p string) bool {
	trimmed := strings.Trim(p, "/")
	if strings.Contains(trimmed, "/") {
		return false
	}
	_, err := os.Readlink(filepath.Join(root, trimmed))
	return err == nil
}

// dpkgDepends reads the Depends and Pre-Depends of installed packages
// (first choice of each alternative, architecture qualifiers dropped).
func dpkgDepends(statusFile string) (map[string][]string, error) {
	f, err := os.Open(statusFile)
	if err != nil {
		return nil, fmt.Errorf("read dpkg status: %w", err)
	}
	defer f.Close()
	deps := map[string][]string{}
	var name string
	var depends []string
	installed := false
	flush := func() {
		if name != "" && installed {
			deps[name] = depends
		}
		name, depends, installed = "", nil, false
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1024*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, "Package: "):
			name = strings.TrimPrefix(line, "Package: ")
		case strings.HasPrefix(line, "Status: "):
			installed = strings.HasSuffix(line, " installed")
		case strings.HasPrefix(line, "Depends: "), strings.HasPrefix(line, "Pre-Depends: "):
			_, list, _ := strings.Cut(line, ": ")
			for _, alt := range strings.Split(list, ",") {
				first, _, _ := strings.Cut(strings.TrimSpace(alt), "|")
				fields := strings.Fields(first)
				if len(fields) > 0 {
					pkg, _, _ := strings.Cut(fields[0], ":")
					depends = append(depends, pkg)
				}
			}
		}
	}
	flush()
	return deps, sc.Err()
}

// packageList reads the files dpkg installed for pkg.
func packageList(root, pkg string) ([]string, error) {
	for _, name := range []string{pkg + ".list", pkg + ":" + runtime.GOARCH + ".list"} {
		data, err := os.ReadFile(filepath.Join(root, "var/lib/dpkg/info", name))
		if err == nil {
			return strings.Split(strings.TrimSpace(string(data)), "\n"), nil
		}
	}
	return nil, fmt.Errorf("no dpkg file list for %s in %s", pkg, root)
}
