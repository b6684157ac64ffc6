package imagebuild

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

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

// Push puts the image into registry (as images.InRegistry names it) unless
// it is there already with the same digest, and says whether it pushed.
// Credentials come from the Docker config keychain ($DOCKER_CONFIG,
// ~/.docker/config.json); insecure allows a registry that speaks plain HTTP.
func (b Built) Push(ctx context.Context, registry string, insecure bool) (ref string, pushed bool, err error) {
	ref = images.InRegistry(b.Image, registry)
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	tag, err := name.NewTag(ref, opts...)
	if err != nil {
		return ref, false, exitcode.Errorf(exitcode.Usage, "--registry %q: %v", registry, err)
	}
	remoteOpts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}
	if desc, err := remote.Head(tag, remoteOpts...); err == nil && desc.Digest == b.Digest {
		return ref, false, nil
	} else if err != nil && !notFound(err) {
		return ref, false, registryError("look up "+ref, err)
	}
	if err := remote.Write(tag, b.image, remoteOpts...); err != nil {
		return ref, false, registryError("push "+ref, err)
	}
	return ref, true, nil
}

// notFound reports whether a registry said the image is not there.
func notFound(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) && te.StatusCode == http.StatusNotFound
}

// registryError classifies a registry's failure for the exit code: one
// that could not be reached, or one that refused.
func registryError(what string, err error) error {
	return exitcode.Errorf(exitcode.Registry, "%s: %v", what, err)
}
