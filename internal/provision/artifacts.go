package provision

// What is built before and beside a cluster, for the commands that ask for
// it by name (prepare, image, and a run with --image-registry): the host
// packages, the Kubernetes and etcd binaries, the images the specs run and
// their push to a registry, kind's node image, and kubeproof's own container
// image.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/internal/debpkg"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision/internal/binaries"
	"github.com/kubeproof/kubeproof/internal/provision/internal/imagebuild"
	"github.com/kubeproof/kubeproof/internal/provision/internal/nodeimage"
)

// Releases name what to build: the Kubernetes and etcd releases and the
// cache that holds what is built.
type Releases struct {
	KubernetesVersion string
	EtcdVersion       string
	CacheDir          string
}

func (r Releases) binaries(ctx context.Context, pr *progress.Printer) (binaries.Set, error) {
	return binaries.Ensure(ctx, binaries.Options{
		KubernetesVersion: r.KubernetesVersion, EtcdVersion: r.EtcdVersion, CacheDir: r.CacheDir, Progress: pr,
	})
}

// Prepare installs the host packages a local cluster needs, builds
// Kubernetes and etcd, and packs every image, saying where each went: what
// `kubeproof up` would otherwise do first.
func Prepare(ctx context.Context, r Releases, pr *progress.Printer) error {
	if err := debpkg.Ensure(ctx, debpkg.LocalCluster, pr); err != nil {
		return err
	}
	set, err := r.binaries(ctx, pr)
	if err != nil {
		return err
	}
	pr.Infof("Kubernetes binaries in %s, etcd in %s", set.KubernetesDir, set.EtcdDir)
	dir, err := imagebuild.ProgramDir()
	if err != nil {
		return err
	}
	for _, img := range images.All {
		tar, err := imagebuild.Build(img, dir, r.CacheDir)
		if err != nil {
			return err
		}
		pr.Infof("image %s in %s", img.Ref, tar)
	}
	return nil
}

// Workload is an image the specs run, built, with its digest.
type Workload struct {
	Image  images.Image
	Digest string
}

// Workloads builds (or finds) the images the specs run.
func Workloads(cacheDir string) ([]Workload, error) {
	built, err := buildWorkloads(cacheDir)
	if err != nil {
		return nil, err
	}
	out := make([]Workload, len(built))
	for i, b := range built {
		out[i] = Workload{Image: b.Image, Digest: fmt.Sprint(b.Digest)}
	}
	return out, nil
}

func buildWorkloads(cacheDir string) ([]imagebuild.Built, error) {
	programs, err := imagebuild.ProgramDir()
	if err != nil {
		return nil, err
	}
	var out []imagebuild.Built
	for _, img := range images.Workloads {
		b, err := imagebuild.Load(img, programs, cacheDir)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// PushWorkloads pushes the images the specs run to registry, tagged tag,
// for this machine's architecture, saying what it did for each.
func PushWorkloads(ctx context.Context, cacheDir, registry, tag string, insecure bool, pr *progress.Printer) error {
	built, err := buildWorkloads(cacheDir)
	if err != nil {
		return err
	}
	for _, b := range built {
		ref, pushed, err := b.Push(ctx, registry, tag, insecure)
		if err != nil {
			return err
		}
		pr.Infof("%s %s (%s)", ref, pushedOrThere(pushed), b.Digest)
	}
	return nil
}

// Publish says which images go where, and for which platforms.
type Publish struct {
	Registry string
	Tag      string
	Insecure bool
	// Arches are the linux architectures, each image an index of them.
	Arches []string
	// Programs holds each architecture's programs in linux_<arch>/ (as the
	// release build lays them out); empty: each found as ProgramsFor finds
	// it (beside this binary, or built from the module source).
	Programs string
}

// PublishWorkloads pushes the images the specs run as multi-platform
// indexes, as a release publishes them, saying what it did for each.
func PublishWorkloads(ctx context.Context, p Publish, pr *progress.Printer) error {
	dirs := map[string]string{}
	for _, arch := range p.Arches {
		if p.Programs != "" {
			dirs[arch] = filepath.Join(p.Programs, "linux_"+arch)
			continue
		}
		dir, err := imagebuild.ProgramsFor(ctx, arch)
		if err != nil {
			return err
		}
		dirs[arch] = dir
	}
	for _, img := range images.Workloads {
		ref, digest, pushed, err := imagebuild.PushPlatforms(ctx, img, dirs, p.Registry, p.Tag, p.Insecure)
		if err != nil {
			return err
		}
		pr.Infof("%s %s (%s; linux/%s)", ref, pushedOrThere(pushed), digest, strings.Join(p.Arches, ", linux/"))
	}
	return nil
}

func pushedOrThere(pushed bool) string {
	if pushed {
		return "pushed"
	}
	return "already there"
}

// NodeImage makes kind's node image (or finds it, tagged by a digest of its
// inputs) in the Docker that dockerHost names, and says which and how.
func NodeImage(ctx context.Context, r Releases, dockerHost, debianMirror string, pr *progress.Printer) (ref string, err error) {
	res, err := nodeimage.Ensure(ctx, nodeimage.Options{
		KubernetesVersion: r.KubernetesVersion, EtcdVersion: r.EtcdVersion,
		CacheDir: r.CacheDir, DockerHost: dockerHost, DebianMirror: debianMirror, Progress: pr,
	})
	if err != nil {
		return "", err
	}
	pr.Infof("%s", res)
	return res.Ref, nil
}

// CLIImage writes kubeproof's own image (this binary, its images'
// programs, kubectl of the release) as a docker archive at path, named tag.
func CLIImage(ctx context.Context, r Releases, path, tag string, pr *progress.Printer) error {
	image, err := r.cliImage(ctx, pr)
	if err != nil {
		return err
	}
	return imagebuild.WriteArchive(path, tag, image)
}

// cliImage is kubeproof's own image: this binary, its images' programs
// and kubectl of the release.
func (r Releases) cliImage(ctx context.Context, pr *progress.Printer) (v1.Image, error) {
	programs, err := imagebuild.ProgramDir()
	if err != nil {
		return nil, err
	}
	bin, err := r.binaries(ctx, pr)
	if err != nil {
		return nil, err
	}
	return imagebuild.CLI(programs, bin.Path("kubectl"))
}

// CLIRepository is the name of kubeproof's own image in a registry
// (REG/kubeproof), beside the images the specs run.
const CLIRepository = "kubeproof"

// PushCLIImage builds kubeproof's own image (as CLIImage does) and puts it
// into registry as REG/kubeproof:tag unless it is there with the same
// digest; ref names it by digest, so that a node pulls this very image
// whatever the tag names later.
func PushCLIImage(ctx context.Context, r Releases, registry, tag string, insecure bool, pr *progress.Printer) (ref string, err error) {
	image, err := r.cliImage(ctx, pr)
	if err != nil {
		return "", err
	}
	repo := strings.TrimSuffix(registry, "/") + "/" + CLIRepository
	digest, pushed, err := imagebuild.PushImage(ctx, image, repo+":"+tag, insecure)
	if err != nil {
		return "", err
	}
	state := "already there"
	if pushed {
		state = "pushed"
	}
	pr.Infof("%s:%s %s (%s)", repo, tag, state, digest)
	return repo + "@" + digest.String(), nil
}

// LoadCLIImage builds kubeproof's own image (as CLIImage does) and loads it
// into every node of the cluster p made (cluster.ImageLoader), named by its
// digest under the loaded images' registry, so that a Pod takes this very
// image and nothing is ever pulled for it.
func LoadCLIImage(ctx context.Context, p cluster.Provider, r Releases, pr *progress.Printer) (ref string, err error) {
	loader, ok := p.(cluster.ImageLoader)
	if !ok {
		return "", exitcode.Errorf(exitcode.Usage, "the %s provider cannot put kubeproof's image on the nodes: give --image-registry, a registry they pull from", p.Name())
	}
	image, err := r.cliImage(ctx, pr)
	if err != nil {
		return "", err
	}
	digest, err := image.Digest()
	if err != nil {
		return "", fmt.Errorf("digest of kubeproof's image: %w", err)
	}
	ref = images.LoadedRegistry + "/" + CLIRepository + ":" + digest.Hex[:12]
	archive := filepath.Join(r.CacheDir, "images", "kubeproof-cli-"+digest.Hex[:12]+".tar")
	if _, err := os.Stat(archive); err != nil {
		if err := imagebuild.WriteArchive(archive, ref, image); err != nil {
			return "", err
		}
	}
	if err := loader.LoadImageArchive(ctx, archive); err != nil {
		return "", fmt.Errorf("load kubeproof's image into the nodes: %w", err)
	}
	pr.Infof("kubeproof's image %s loaded into the nodes", ref)
	return ref, nil
}
