package imagebuild

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/internal/exitcode"
)

// Built is one of our images as built here: its archive and digest.
type Built struct {
	Image   images.Image
	Archive string
	Digest  v1.Hash
	image   v1.Image
}

// Load builds img (or finds its archive) and reads its digest.
func Load(img images.Image, programDir, cacheDir string) (Built, error) {
	path, err := Build(img, programDir, cacheDir)
	if err != nil {
		return Built{}, err
	}
	tag, err := name.NewTag(img.Ref)
	if err != nil {
		return Built{}, err
	}
	image, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		return Built{}, fmt.Errorf("read image %s: %w", img.Ref, err)
	}
	digest, err := image.Digest()
	if err != nil {
		return Built{}, fmt.Errorf("digest of image %s: %w", img.Ref, err)
	}
	return Built{Image: img, Archive: path, Digest: digest, image: image}, nil
}

// Push puts the image into registry, tagged tag (as images.InRegistry
// names it), unless it is there already with the same digest, and says
// whether it pushed. Credentials come from the Docker config keychain
// ($DOCKER_CONFIG, ~/.docker/config.json); insecure allows a registry that
// speaks plain HTTP.
func (b Built) Push(ctx context.Context, registry, tag string, insecure bool) (ref string, pushed bool, err error) {
	return push(ctx, images.InRegistry(b.Image, registry, tag), b.Digest, insecure, func(t name.Tag, o ...remote.Option) error {
		return remote.Write(t, b.image, o...)
	})
}

// PushPlatforms puts img into registry, tagged tag, as one index with an
// image per architecture (arch -> the directory of that platform's
// programs), as a release publishes it; unless the same index is there
// already.
func PushPlatforms(ctx context.Context, img images.Image, programs map[string]string, registry, tag string, insecure bool) (ref string, digest v1.Hash, pushed bool, err error) {
	var adds []mutate.IndexAddendum
	for _, arch := range slices.Sorted(maps.Keys(programs)) {
		bin := filepath.Join(programs[arch], img.Program)
		data, err := os.ReadFile(bin)
		if err != nil {
			return "", v1.Hash{}, false, exitcode.Errorf(exitcode.MissingTool, "image %s for linux/%s: %v", img.Name(), arch, err)
		}
		if err := checkArch(data, arch); err != nil {
			return "", v1.Hash{}, false, fmt.Errorf("image %s for linux/%s: %s: %w", img.Name(), arch, bin, err)
		}
		image, err := imageForArch(img, data, arch)
		if err != nil {
			return "", v1.Hash{}, false, fmt.Errorf("image %s for linux/%s: %w", img.Name(), arch, err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: image, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	index := mutate.IndexMediaType(mutate.AppendManifests(empty.Index, adds...), types.DockerManifestList)
	if digest, err = index.Digest(); err != nil {
		return "", v1.Hash{}, false, fmt.Errorf("image %s: %w", img.Name(), err)
	}
	ref, pushed, err = push(ctx, images.InRegistry(img, registry, tag), digest, insecure, func(t name.Tag, o ...remote.Option) error {
		return remote.WriteIndex(t, index, o...)
	})
	return ref, digest, pushed, err
}

// PushImage puts image at ref unless it is there already with the same
// digest, and returns its digest and whether it pushed. Credentials come
// from the Docker config keychain ($DOCKER_CONFIG, ~/.docker/config.json);
// insecure allows a registry that speaks plain HTTP.
func PushImage(ctx context.Context, image v1.Image, ref string, insecure bool) (digest v1.Hash, pushed bool, err error) {
	if digest, err = image.Digest(); err != nil {
		return digest, false, fmt.Errorf("digest of image %s: %w", ref, err)
	}
	_, pushed, err = push(ctx, ref, digest, insecure, func(t name.Tag, o ...remote.Option) error {
		return remote.Write(t, image, o...)
	})
	return digest, pushed, err
}

// push writes what write writes at ref unless ref has digest already.
func push(ctx context.Context, ref string, digest v1.Hash, insecure bool, write func(name.Tag, ...remote.Option) error) (string, bool, error) {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	tag, err := name.NewTag(ref, opts...)
	if err != nil {
		return ref, false, exitcode.Errorf(exitcode.Usage, "registry: %q is no image reference: %v", ref, err)
	}
	remoteOpts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}
	if desc, err := remote.Head(tag, remoteOpts...); err == nil && desc.Digest == digest {
		return ref, false, nil
	} else if err != nil && !notFound(err) {
		return ref, false, registryError("look up "+ref, err)
	}
	if err := write(tag, remoteOpts...); err != nil {
		return ref, false, registryError("push "+ref, err)
	}
	return ref, true, nil
}

// checkArch refuses a program that is not a Linux ELF executable for arch:
// an image must never carry another platform's binary under its name.
func checkArch(data []byte, arch string) error {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not a Linux executable: %w", err)
	}
	want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
	if want == 0 || f.Machine != want {
		return fmt.Errorf("built for %s, not %s", f.Machine, arch)
	}
	return nil
}

// notFound reports whether a registry said the image is not there.
func notFound(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) && te.StatusCode == http.StatusNotFound
}

// registryError classifies a registry's failure for the exit code: one
// that could not be reached, or one that refused.
func registryError(what string, err error) error {
	return exitcode.Errorf(exitcode.Registry, "image registry: %s: %v", what, err)
}
