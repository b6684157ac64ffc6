// Package freshimage makes images no node has: a copy of kubeproof's test
// app whose one layer holds a file of its own, pushed to the registry
// kubeproof serves beside the cluster (cluster.PullRegistry). A Pod that
// names one makes its node download the whole image (its layer's digest is
// new to every node), which is what the claims about pulling an image need:
// an image loaded into the node, or one that shares its layer with it, is
// not downloaded. It also reads the registry's access log, to tell which
// requests fetched a given image.
package freshimage

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/contract/registrylog"
)

// Repository is where fresh images go in the registry.
const Repository = "kubeproof/fresh"

// Image is a fresh image in the registry.
type Image struct {
	// Tag is its tag; Ref its name at the registry's full-speed address.
	Tag string
	Ref string
	// Digest is its manifest's digest; Blobs the digests of its config
	// and its layer, which only this image has.
	Digest string
	Blobs  []string
	// Bytes is what a node downloads for it: its manifest, config and
	// (compressed) layer; ManifestBytes the manifest's part.
	Bytes         int64
	ManifestBytes int64
}

// At is the image's name at addr, one of the registry's addresses (the
// slow one, say): the same image, over another link.
func (i Image) At(addr string) string { return addr + "/" + Repository + ":" + i.Tag }

// Push makes a fresh image tagged tag (letters, digits, '.', '-', '_') from
// the registry's test app image, and pushes it there.
func Push(ctx context.Context, reg *cluster.PullRegistry, tag string) (Image, error) {
	base, err := name.ParseReference(reg.Base, name.Insecure)
	if err != nil {
		return Image{}, fmt.Errorf("the registry's base image %q: %w", reg.Base, err)
	}
	opts := []remote.Option{remote.WithContext(ctx)}
	files, cfg, err := baseOf(base, opts)
	if err != nil {
		return Image{}, fmt.Errorf("read the registry's base image %s: %w", reg.Base, err)
	}
	img, err := withOwnLayer(files, cfg, tag)
	if err != nil {
		return Image{}, fmt.Errorf("make image %s: %w", tag, err)
	}
	ref := reg.Address + "/" + Repository + ":" + tag
	dest, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		return Image{}, fmt.Errorf("image name %q: %w", ref, err)
	}
	if err := remote.Write(dest, img, opts...); err != nil {
		return Image{}, fmt.Errorf("push %s to the cluster's registry: %w", ref, err)
	}
	return describe(img, tag, ref)
}

// The base image's files (its layers joined, as one tar) and
// configuration, read once per process and base: every fresh image of a
// run is made from the same.
var (
	basesMu sync.Mutex
	bases   = map[string]baseImage{}
)

type baseImage struct {
	files []byte
	cfg   *v1.ConfigFile
}

func baseOf(ref name.Reference, opts []remote.Option) ([]byte, *v1.ConfigFile, error) {
	basesMu.Lock()
	defer basesMu.Unlock()
	if b, ok := bases[ref.String()]; ok {
		return b.files, b.cfg, nil
	}
	img, err := remote.Image(ref, opts...)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, nil, err
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, l := range layers {
		if err := copyLayer(tw, l); err != nil {
			return nil, nil, err
		}
	}
	if err := tw.Flush(); err != nil {
		return nil, nil, err
	}
	bases[ref.String()] = baseImage{files: buf.Bytes(), cfg: cfg}
	return buf.Bytes(), cfg, nil
}

// withOwnLayer is an image of the base's files and configuration whose one
// layer also holds /kubeproof-image, whose content is tag: a layer no
// other image has.
func withOwnLayer(files []byte, cfg *v1.ConfigFile, tag string) (v1.Image, error) {
	var buf bytes.Buffer
	buf.Write(files) // the entries, without the end-of-archive blocks
	tw := tar.NewWriter(&buf)
	own := []byte(tag + "\n")
	if err := tw.WriteHeader(&tar.Header{Name: "kubeproof-image", Mode: 0o644, Size: int64(len(own)), Typeflag: tar.TypeReg}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(own); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	// Compressed once: its digest and the push read the same bytes.
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }, tarball.WithCompressedCaching)
	if err != nil {
		return nil, err
	}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		Architecture: cfg.Architecture, OS: cfg.OS, Config: cfg.Config, RootFS: v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return nil, err
	}
	return mutate.AppendLayers(img, layer)
}

// copyLayer copies a layer's entries into tw.
func copyLayer(tw *tar.Writer, l v1.Layer) error {
	rc, err := l.Uncompressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return err
		}
	}
}

func describe(img v1.Image, tag, ref string) (Image, error) {
	digest, err := img.Digest()
	if err != nil {
		return Image{}, err
	}
	manifest, err := img.RawManifest()
	if err != nil {
		return Image{}, err
	}
	cfg, err := img.ConfigName()
	if err != nil {
		return Image{}, err
	}
	rawCfg, err := img.RawConfigFile()
	if err != nil {
		return Image{}, err
	}
	out := Image{Tag: tag, Ref: ref, Digest: digest.String(), Blobs: []string{cfg.String()}, Bytes: int64(len(manifest) + len(rawCfg)), ManifestBytes: int64(len(manifest))}
	layers, err := img.Layers()
	if err != nil {
		return Image{}, err
	}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return Image{}, err
		}
		size, err := l.Size()
		if err != nil {
			return Image{}, err
		}
		out.Blobs = append(out.Blobs, d.String())
		out.Bytes += size
	}
	return out, nil
}

// Fetch is what the registry's access log says a node fetched of an image.
type Fetch struct {
	// Requests are the requests for the image (its tag, its manifest's
	// digest, its blobs), in the order they arrived.
	Requests []registrylog.Request
	// ManifestRequests and BlobRequests count them by kind; BlobBytes is
	// what the blobs' answers sent.
	ManifestRequests int
	BlobRequests     int
	BlobBytes        int64
	// Clients are the addresses (without port) the requests came from.
	Clients []string
	// Start is when the first request arrived, End when the last answer
	// was sent.
	Start, End time.Time
}

// Seconds is the time from the first request to the last answer.
func (f Fetch) Seconds() float64 { return f.End.Sub(f.Start).Seconds() }

// Whole reports whether the registry sent all of img's blobs, its config
// and its layer: a whole download (the manifest is not a blob).
func (f Fetch) Whole(img Image) bool { return f.BlobBytes >= img.Bytes-img.ManifestBytes }

// FetchOf picks the requests for img out of reqs (other pushes aside: a
// push of the image is not a fetch).
func FetchOf(reqs []registrylog.Request, img Image) Fetch {
	var f Fetch
	for _, r := range reqs {
		if r.Method != "GET" && r.Method != "HEAD" {
			continue
		}
		ref := r.Reference()
		switch r.Kind() {
		case "manifest":
			if !strings.Contains(r.Path, "/"+Repository+"/") || (ref != img.Tag && ref != img.Digest) {
				continue
			}
			f.ManifestRequests++
		case "blob":
			if !slices.Contains(img.Blobs, ref) {
				continue
			}
			f.BlobRequests++
			f.BlobBytes += r.Bytes
		default:
			continue
		}
		f.Requests = append(f.Requests, r)
		if f.Start.IsZero() || r.Start.Before(f.Start) {
			f.Start = r.Start
		}
		if r.End().After(f.End) {
			f.End = r.End()
		}
		host := r.Remote
		if i := strings.LastIndexByte(host, ':'); i >= 0 {
			host = host[:i]
		}
		if !slices.Contains(f.Clients, host) {
			f.Clients = append(f.Clients, host)
		}
	}
	return f
}
