// Package nodeimage builds kind's node image without a registry: a Debian
// bookworm (or, on Ubuntu, Ubuntu) root filesystem from the machine's apt
// source, kind's base files
// from the kind Go module, Kubernetes built from Go modules (kubeadm,
// kubelet, kubectl on the node; the control plane, kube-proxy, etcd, CoreDNS
// and pause as images already in the node's containerd), kubeproof's own
// images and CNI trace plugin (so that no cluster loads them into each
// node), and a containerd configuration for the hosts kubeproof runs on.
// The image is loaded into Docker under a tag that names its inputs, and
// rebuilt only when they change.
package nodeimage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision/internal/binaries"
	"github.com/kubeproof/kubeproof/internal/provision/internal/cni"
	"github.com/kubeproof/kubeproof/internal/provision/internal/imagebuild"
	"github.com/kubeproof/kubeproof/internal/provision/internal/releases"
)

// recipe changes whenever the way the image is made changes, so that a
// cached image from an older recipe is not reused.
const recipe = "kubeproof-node/3"

// Options say what to build the node image from.
type Options struct {
	KubernetesVersion string
	EtcdVersion       string
	CacheDir          string
	// DockerHost is the Docker API the image is loaded into (DOCKER_HOST).
	DockerHost string
	// DebianMirror is a Debian mirror debootstrap fetches a bookworm root
	// filesystem from; empty: the machine's own apt sources decide (see
	// chooseSource: Debian bookworm, or the machine's Ubuntu suite).
	DebianMirror string
	Progress     *progress.Printer
}

// archive is an image archive and the reference it holds.
type archive struct {
	Ref, Path string
}

// baked are kubeproof's images in every node image it builds: a cluster
// needs not load them into each node (about 8 s for three nodes).
var baked = append(slices.Clone(images.All), images.CNI)

// bakedFiles are kubeproof's programs in every node image (node path ->
// program name beside kubeproof): the CNI trace plugin.
var bakedFiles = map[string]string{"/opt/cni/bin/" + cni.TracePlugin: cni.TracePlugin}

// kubeproofInputs builds the archives of the baked images and finds the
// bakedFiles on this machine.
func kubeproofInputs(programs, cacheDir string) ([]archive, map[string]string, error) {
	var archives []archive
	for _, img := range baked {
		path, err := imagebuild.Build(img, programs, cacheDir)
		if err != nil {
			return nil, nil, err
		}
		archives = append(archives, archive{Ref: img.Ref, Path: path})
	}
	files := map[string]string{}
	for dst, name := range bakedFiles {
		files[dst] = filepath.Join(programs, name)
		if _, err := os.Stat(files[dst]); err != nil {
			return nil, nil, exitcode.Errorf(exitcode.MissingTool, "%s not found beside kubeproof (build it with `make build`): %v", name, err)
		}
	}
	return archives, files, nil
}

// Result is the node image Ensure found or built.
type Result struct {
	Ref string
	// Built: this call built it; otherwise Docker had it.
	Built bool
	// Source is the root filesystem's source (when Built).
	Source Source
}

// String is the one line that says which node image a cluster gets and
// where it came from.
func (r Result) String() string {
	if r.Built {
		return fmt.Sprintf("node image %s: kubeproof's own, built here offline from Go modules and a root filesystem of %s", r.Ref, r.Source)
	}
	return fmt.Sprintf("node image %s: kubeproof's own, found in Docker (built earlier from the same inputs)", r.Ref)
}

// Ensure returns the node image for opts, building and loading it into
// Docker first if Docker does not have it.
func Ensure(ctx context.Context, opts Options) (Result, error) {
	pr := opts.Progress
	if pr == nil {
		pr = progress.Discard()
		opts.Progress = pr
	}
	if opts.EtcdVersion == "" {
		opts.EtcdVersion = releases.EtcdVersionFor(opts.KubernetesVersion)
	}
	bin, err := binaries.Ensure(ctx, binaries.Options{
		KubernetesVersion: opts.KubernetesVersion, EtcdVersion: opts.EtcdVersion, CacheDir: opts.CacheDir, Progress: pr,
	})
	if err != nil {
		return Result{}, err
	}
	refs, err := kubeadmImages(ctx, bin.Path("kubeadm"), opts.KubernetesVersion)
	if err != nil {
		return Result{}, err
	}
	kind, err := kindModule(ctx)
	if err != nil {
		return Result{}, err
	}
	programs, err := imagebuild.ProgramDir()
	if err != nil {
		return Result{}, err
	}
	pause, err := os.ReadFile(filepath.Join(programs, images.Pause.Program))
	if err != nil {
		return Result{}, exitcode.Errorf(exitcode.MissingTool, "%s not found beside kubeproof (build it with `make build`): %v", images.Pause.Program, err)
	}
	preloads, files, err := kubeproofInputs(programs, opts.CacheDir)
	if err != nil {
		return Result{}, err
	}
	extra, err := extraDigest(preloads, files)
	if err != nil {
		return Result{}, err
	}
	// The source names the image (its distribution and suite); a machine
	// without one can still use the image built from Debian's.
	src, srcErr := source(opts.DebianMirror)
	if srcErr != nil {
		src = DebianSource("", "")
	}
	ref := Ref(opts.KubernetesVersion, inputsDigest(opts, src, bin, refs, kind.Version, append(pause, extra...)))
	if dockerHas(ctx, opts.DockerHost, ref) {
		return Result{Ref: ref}, nil
	}
	if srcErr != nil {
		return Result{}, srcErr
	}

	rootfs, err := rootfsTar(ctx, opts.CacheDir, src, pr)
	if err != nil {
		return Result{}, err
	}
	done := pr.Step("building node image %s", ref)
	err = build(ctx, opts, ref, rootfs, bin, refs, kind.Dir, preloads, files)
	done(err)
	if err != nil {
		return Result{}, err
	}
	removeOlder(ctx, opts.DockerHost, ref)
	return Result{Ref: ref, Built: true, Source: src}, nil
}

// removeOlder deletes node images of earlier inputs from Docker (each is
// hundreds of megabytes); one still used by a container stays.
func removeOlder(ctx context.Context, host, keep string) {
	cmd := exec.CommandContext(ctx, "docker", "image", "ls", "--format", "{{.Repository}}:{{.Tag}}", Repository+"/kind-node")
	cmd.Env = dockerEnv(host)
	out, err := cmd.Output()
	if err != nil {
		return
	}
	for _, ref := range strings.Fields(string(out)) {
		if ref != keep {
			rm := exec.CommandContext(ctx, "docker", "image", "rm", ref)
			rm.Env = dockerEnv(host)
			_ = rm.Run()
		}
	}
}

// Ref is the node image's reference: kubeproof.local/kind-node:<version>-<digest>.
func Ref(kubernetesVersion, digest string) string {
	return Repository + "/kind-node:" + kubernetesVersion + "-" + digest
}

// inputsDigest names everything the image is made of.
func inputsDigest(opts Options, src Source, bin binaries.Set, kubeadmRefs []string, kindVersion string, pause []byte) string {
	h := sha256.New()
	fmt.Fprintln(h, recipe, src.digestName(), strings.Join(nodePackages, ","))
	fmt.Fprintln(h, opts.KubernetesVersion, opts.EtcdVersion, kindVersion, filepath.Base(bin.ContainerdDir), filepath.Base(bin.RuncDir))
	fmt.Fprintln(h, strings.Join(kubeadmRefs, ","))
	fmt.Fprintln(h, containerdConfig)
	h.Write(pause)
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// extraDigest names the preloaded archives and the added files by their
// contents.
func extraDigest(preloads []archive, files map[string]string) ([]byte, error) {
	h := sha256.New()
	for _, a := range preloads {
		fmt.Fprintln(h, a.Ref)
		if err := hashFile(h, a.Path); err != nil {
			return nil, err
		}
	}
	for _, dst := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintln(h, dst)
		if err := hashFile(h, files[dst]); err != nil {
			return nil, err
		}
	}
	return h.Sum(nil), nil
}

func hashFile(h io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("node image input: %w", err)
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("node image input %s: %w", path, err)
	}
	return nil
}

// addFiles copies files (node path -> path here) into root, executable.
func addFiles(root string, files map[string]string) error {
	for dst, src := range files {
		data, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("add %s to the node image: %w", src, err)
		}
		target, err := inRoot(root, dst)
		if err != nil {
			return fmt.Errorf("add %s to the node image: %w", src, err)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return fmt.Errorf("add %s to the node image: %w", src, err)
		}
		if err := os.WriteFile(target, data, 0o755); err != nil {
			return fmt.Errorf("add %s to the node image: %w", src, err)
		}
	}
	return nil
}

// inRoot is where path p of the node's filesystem is in root, following
// the node's symbolic links as the node would (its /opt/cni/bin links to
// /usr/lib/cni): filepath.Join would follow an absolute link to this
// machine's own file. Components that do not exist yet are kept as named.
func inRoot(root, p string) (string, error) {
	rest := strings.Split(strings.Trim(filepath.Clean("/"+p), "/"), "/")
	cur := "/"
	for hops := 0; len(rest) > 0; {
		comp := rest[0]
		rest = rest[1:]
		next := filepath.Join(cur, comp)
		fi, err := os.Lstat(filepath.Join(root, next))
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return "", fmt.Errorf("%s: too many symbolic links", p)
		}
		target, err := os.Readlink(filepath.Join(root, next))
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(cur, target)
		}
		// Resolve the target from the node's root, then what was left.
		rest = append(strings.Split(strings.Trim(filepath.Clean(target), "/"), "/"), rest...)
		cur = "/"
	}
	return filepath.Join(root, cur), nil
}

// build makes the root filesystem in a temporary directory and loads it.
func build(ctx context.Context, opts Options, ref, rootfsTar string, bin binaries.Set, kubeadmRefs []string, kindDir string, preloads []archive, files map[string]string) error {
	work, err := os.MkdirTemp(filepath.Join(opts.CacheDir, "kind"), "node-build-")
	if err != nil {
		return fmt.Errorf("create build directory: %w", err)
	}
	defer os.RemoveAll(work)
	root := filepath.Join(work, "rootfs")
	if err := os.Mkdir(root, 0o755); err != nil {
		return fmt.Errorf("create build directory: %w", err)
	}
	if err := run(ctx, "tar", "--numeric-owner", "--xattrs", "-C", root, "-xf", rootfsTar); err != nil {
		return fmt.Errorf("unpack root filesystem: %w", err)
	}
	if err := customize(root, kindDir, bin, opts.KubernetesVersion); err != nil {
		return err
	}
	comps, err := components(ctx, kubeadmRefs, bin, opts)
	if err != nil {
		return err
	}
	if err := addFiles(root, files); err != nil {
		return err
	}
	if err := preload(ctx, bin, root, work, comps, preloads); err != nil {
		return err
	}
	return load(ctx, opts.DockerHost, ref, root, work)
}

// dockerHas reports whether Docker at host has image ref.
func dockerHas(ctx context.Context, host, ref string) bool {
	cmd := exec.CommandContext(ctx, "docker", "image", "inspect", "--format", "{{.Id}}", ref)
	cmd.Env = dockerEnv(host)
	return cmd.Run() == nil
}

func dockerEnv(host string) []string {
	env := os.Environ()
	if host != "" {
		env = append(env, "DOCKER_HOST="+host)
	}
	return env
}
