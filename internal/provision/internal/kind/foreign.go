package kind

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision/internal/binaries"
	"github.com/kubeproof/kubeproof/internal/provision/internal/capdrop"
	"github.com/kubeproof/kubeproof/internal/provision/internal/cni"
	"github.com/kubeproof/kubeproof/internal/provision/internal/containerdconf"
	"github.com/kubeproof/kubeproof/internal/provision/internal/hostchange"
	"github.com/kubeproof/kubeproof/internal/provision/internal/imagebuild"
	"github.com/kubeproof/kubeproof/internal/provision/internal/nodeimage"
)

// A node image not built by kubeproof in this run (--node-image): kind's
// own, another project's, or one of kubeproof's served by a registry under
// another name. What kubeproof's own node image has baked in (package
// nodeimage), such an image gets at create time, or the cluster is not
// made and a one-line error names what the image lacks:
//   - kubeadm's images for the cluster's Kubernetes release, under
//     kubeproof.local (a node image of kubeproof's) or kubeadm's default
//     registry.k8s.io (kind's): the nodes pull nothing; kubeadm is told
//     which repository holds them;
//   - containerd's CRI settings: restrict_oom_score_adj on a machine
//     without CAP_SYS_RESOURCE, and the registry configuration directory
//     where the provider writes kubeproof.local's hosts.toml (so that a
//     pull of an image that is not loaded fails on loopback), patched
//     through kind's containerdConfigPatches;
//   - the CNI plugins kubeproof-cni configures (bridge, host-local,
//     portmap; loopback unless containerd sets lo up itself), copied from
//     kubeproof's static build of the reference plugins when missing
//     (kind's own node image has no bridge);
//   - kubeproof's images and the CNI trace plugin, loaded and copied into
//     every node;
//   - a systemd that boots on this machine: systemd 256 and newer refuse
//     cgroup v1 (kind's own node image is Debian trixie, systemd 257).
//
// The kubelet and kube-proxy settings (failCgroupV1, oomScoreAdj) are
// kubeadm patches of every cluster, whatever its node image.

// foreign is what a node image not ours gets before and after kind create.
type foreign struct {
	Ref string
	// Pulled: Docker did not have it and pulled it from its registry.
	Pulled   bool
	Contents nodeimage.Contents
	// ImageRepository is kubeadm's image repository ("" for its default).
	ImageRepository string
	// ContainerdPatch is merged into every node's containerd
	// configuration ("" for none); Patched names what it sets.
	ContainerdPatch string
	Patched         []string
	// Plugins are the CNI plugins the image lacks.
	Plugins []string
}

// hostTraits are what of this machine a node image must suit.
type hostTraits struct {
	// CgroupV1: cgroup v1 controllers are mounted (a v1 or hybrid layout).
	CgroupV1 bool
	// NoSysResource: the capability bounding set lacks CAP_SYS_RESOURCE.
	NoSysResource bool
}

// thisHost reads this machine's traits.
func thisHost() (hostTraits, error) {
	ms, err := hostchange.Mounts()
	if err != nil {
		return hostTraits{}, err
	}
	caps, err := capdrop.BoundingSet()
	if err != nil {
		return hostTraits{}, err
	}
	layout := hostchange.CgroupLayout(ms)
	return hostTraits{CgroupV1: layout == "v1" || layout == "hybrid", NoSysResource: !caps["CAP_SYS_RESOURCE"]}, nil
}

// firstSystemdWithoutCgroupV1 is the systemd release that refuses to boot
// under cgroup v1 (its NEWS for 256: v1 and hybrid hierarchies are
// unsupported unless forced on the kernel command line).
const firstSystemdWithoutCgroupV1 = 256

// defaultImageRepository is kubeadm's image repository when none is set,
// where kind's node images hold kubeadm's images.
const defaultImageRepository = "registry.k8s.io"

// podNetworkPlugins are the CNI plugins kubeproof-cni's configuration
// names (package cni), besides its trace plugin.
var podNetworkPlugins = []string{"bridge", "host-local", "portmap"}

// checkForeign refuses, in one line, a node image with contents c that
// cannot run a cluster of version on host h whatever is added to it, and
// returns its containerd settings.
func checkForeign(ref string, c nodeimage.Contents, version string, h hostTraits) (containerdconf.Settings, error) {
	lacks := func(format string, args ...any) error {
		return exitcode.Errorf(exitcode.Usage, "--node-image %s "+format, append([]any{ref}, args...)...)
	}
	if c.KubernetesVersion == "" {
		return containerdconf.Settings{}, lacks("is not a kind node image: it has no /kind/version")
	}
	if c.KubernetesVersion != version {
		return containerdconf.Settings{}, lacks("holds Kubernetes %s (its /kind/version), not %s: give --kubernetes-version %s", c.KubernetesVersion, version, c.KubernetesVersion)
	}
	if c.Systemd == 0 {
		return containerdconf.Settings{}, lacks("has no systemd (/usr/lib/systemd/systemd), which a kind node boots as its first process")
	}
	if h.CgroupV1 && c.Systemd >= firstSystemdWithoutCgroupV1 {
		return containerdconf.Settings{}, lacks("has systemd %d, which refuses to boot on this machine's cgroup v1 (systemd %d and newer do): leave out --node-image for kubeproof's own node image (systemd 252)", c.Systemd, firstSystemdWithoutCgroupV1)
	}
	if c.ContainerdConfig == "" {
		return containerdconf.Settings{}, lacks("has no containerd configuration (/etc/containerd/config.toml)")
	}
	conf, err := containerdconf.Read(c.ContainerdConfig)
	if err != nil {
		return conf, lacks("has a containerd configuration kubeproof cannot use: %v", err)
	}
	return conf, nil
}

// planForeign decides what the node image with contents c needs for a
// cluster of version on host h, or says in one line what it lacks.
// kubeadmImages lists kubeadm's images of version under a repository.
func planForeign(ref string, c nodeimage.Contents, version string, kubeadmImages func(repo string) ([]string, error), h hostTraits) (foreign, error) {
	f := foreign{Ref: ref, Contents: c}
	lacks := func(format string, args ...any) error {
		return exitcode.Errorf(exitcode.Usage, "--node-image %s "+format, append([]any{ref}, args...)...)
	}
	conf, err := checkForeign(ref, c, version, h)
	if err != nil {
		return f, err
	}

	// kubeadm's images, under whichever repository holds all of them; if
	// none does, the one that lacks fewest (kubeadm's default on a tie) is
	// named.
	var missing []string
	for i, repo := range []string{defaultImageRepository, nodeimage.Repository} {
		want, err := kubeadmImages(repo)
		if err != nil {
			return f, err
		}
		m := absent(want, c.Images)
		if len(m) == 0 {
			if repo != defaultImageRepository {
				f.ImageRepository = repo
			}
			missing = nil
			break
		}
		if i == 0 || len(m) < len(missing) {
			missing = m
		}
	}
	if len(missing) > 0 {
		return f, lacks("lacks images kubeadm needs for Kubernetes %s, and kubeproof's nodes pull none: %s", version, strings.Join(missing, ", "))
	}
	if conf.Sandbox != "" && !slices.Contains(c.Images, conf.Sandbox) {
		return f, lacks("lacks the sandbox image its containerd configuration names: %s", conf.Sandbox)
	}

	restrict := h.NoSysResource && !conf.RestrictOOMScoreAdj
	configPath := ""
	if !slices.Contains(strings.Split(conf.RegistryConfigPath, ":"), certsDir) {
		configPath = certsDir
	}
	if f.ContainerdPatch, err = containerdconf.Patch(conf.Version, restrict, configPath); err != nil {
		return f, lacks("has a containerd configuration kubeproof cannot patch: %v", err)
	}
	if restrict {
		f.Patched = append(f.Patched, "restrict_oom_score_adj (no CAP_SYS_RESOURCE here)")
	}
	if configPath != "" {
		f.Patched = append(f.Patched, "registry config_path "+configPath)
	}

	need := slices.Clone(podNetworkPlugins)
	if !conf.InternalLoopback {
		need = append(need, "loopback")
	}
	f.Plugins = absent(need, c.CNIPlugins)
	return f, nil
}

// absent are the elements of want that have does not hold.
func absent(want, have []string) []string {
	var out []string
	for _, w := range want {
		if !slices.Contains(have, w) {
			out = append(out, w)
		}
	}
	return out
}

// String is the one line that says which node image the cluster runs and
// what kubeproof puts into it; loads are kubeproof's images it loads.
func (f foreign) String(loads int) string {
	from := "found in Docker"
	if f.Pulled {
		from = "pulled from its registry"
	}
	repo := f.ImageRepository
	if repo == "" {
		repo = defaultImageRepository
	}
	var b strings.Builder
	fmt.Fprintf(&b, "node image %s: not built by kubeproof in this run, %s (Kubernetes %s, systemd %d, kubeadm's images under %s); ",
		f.Ref, from, f.Contents.KubernetesVersion, f.Contents.Systemd, repo)
	fmt.Fprintf(&b, "kubeproof loads its %d images and copies %s", loads, cni.TracePlugin)
	if len(f.Plugins) > 0 {
		fmt.Fprintf(&b, " and the CNI plugins %s (built from %s %s)", strings.Join(f.Plugins, ", "), binaries.CNIPluginsModule, binaries.DefaultCNIPluginsVersion)
	}
	b.WriteString(" into every node")
	if len(f.Patched) > 0 {
		fmt.Fprintf(&b, ", and sets containerd's %s", strings.Join(f.Patched, " and "))
	}
	return b.String()
}

// foreignImage pulls the node image if Docker lacks it, reads it, and
// decides what it gets. It runs before the binaries step: a node image of
// another Kubernetes release is refused before that release is built (13
// minutes here); kubeadm, to list its images, is built (or found) after.
func (u *bringUp) foreignImage(ctx context.Context) error {
	c := u.p.cfg
	pulled, err := nodeimage.Pull(ctx, u.st.DockerHost, c.NodeImage)
	if err != nil {
		return err
	}
	contents, err := nodeimage.Inspect(ctx, u.st.DockerHost, c.NodeImage)
	if err != nil {
		return err
	}
	h, err := thisHost()
	if err != nil {
		return err
	}
	if _, err := checkForeign(c.NodeImage, contents, c.KubernetesVersion, h); err != nil {
		return err
	}
	if err := u.binaries(ctx); err != nil {
		return err
	}
	list := func(repo string) ([]string, error) {
		return nodeimage.KubeadmImages(ctx, u.bin.Path("kubeadm"), c.KubernetesVersion, repo)
	}
	f, err := planForeign(c.NodeImage, contents, c.KubernetesVersion, list, h)
	if err != nil {
		return err
	}
	f.Pulled = pulled
	u.foreign = &f
	return nil
}

// copyPrograms puts programs (name -> path on this machine) into every
// node's CNI bin directory, one docker exec per node, all nodes at once.
func copyPrograms(ns []nodes.Node, programs map[string]string) error {
	var files []imagebuild.File
	for _, name := range slices.Sorted(maps.Keys(programs)) {
		data, err := os.ReadFile(programs[name])
		if err != nil {
			return fmt.Errorf("copy %s into the nodes: %w", name, err)
		}
		files = append(files, imagebuild.File{Path: name, Mode: 0o755, Data: data})
	}
	archive, err := imagebuild.Tar(files)
	if err != nil {
		return fmt.Errorf("pack the programs for the nodes: %w", err)
	}
	var g errgroup.Group
	for _, n := range ns {
		g.Go(func() error {
			cmd := n.Command("sh", "-c", "mkdir -p "+nodeCNIBinDir+" && tar -x -C "+nodeCNIBinDir+" -f -").SetStdin(bytes.NewReader(archive))
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("copy %s into node %s: %w", strings.Join(slices.Sorted(maps.Keys(programs)), ", "), n, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// foreignPrograms are the programs a node image not ours gets in its CNI
// bin directory: the trace plugin and the CNI plugins it lacks.
func (u *bringUp) foreignPrograms(ctx context.Context) (map[string]string, error) {
	programs, err := imagebuild.ProgramDir()
	if err != nil {
		return nil, err
	}
	out := map[string]string{cni.TracePlugin: filepath.Join(programs, cni.TracePlugin)}
	if _, err := os.Stat(out[cni.TracePlugin]); err != nil {
		return nil, exitcode.Errorf(exitcode.MissingTool, "the CNI trace plugin %s is missing (make build puts it beside kubeproof): %v", cni.TracePlugin, err)
	}
	if len(u.foreign.Plugins) == 0 {
		return out, nil
	}
	c := u.p.cfg
	dir, err := binaries.EnsureCNIPlugins(ctx, binaries.Options{KubernetesVersion: c.KubernetesVersion, CacheDir: c.CacheDir, Progress: c.Progress}, binaries.DefaultCNIPluginsVersion)
	if err != nil {
		return nil, err
	}
	for _, p := range u.foreign.Plugins {
		out[p] = filepath.Join(dir, p)
	}
	return out, nil
}

// heldWorkloads are the images the specs run that the node image holds:
// with --load-images=false they are removed, so that the nodes pull them.
func (f foreign) heldWorkloads() []images.Image {
	var out []images.Image
	for _, img := range images.Workloads {
		if slices.Contains(f.Contents.Images, img.Ref) {
			out = append(out, img)
		}
	}
	return out
}
