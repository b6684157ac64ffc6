// Package imagebuild turns this repository's Go programs into container
// images without a registry or a Docker engine: one layer holding one static
// binary, written as a docker-archive tarball that containerd (ctr import)
// and kind (LoadImageArchive) accept.
package imagebuild

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/internal/exitcode"
)

// Build writes img as a docker-archive tarball under cacheDir/images and
// returns its path. The file name carries a hash of the binary, so an
// unchanged program is not packed again.
func Build(img images.Image, programDir, cacheDir string) (string, error) {
	bin := filepath.Join(programDir, img.Program)
	data, err := os.ReadFile(bin)
	if err != nil {
		return "", exitcode.Errorf(exitcode.MissingTool,
			"image %s: program %s not found (build it with `make build`, or set KUBEPROOF_PROGRAM_DIR): %v", img.Ref, bin, err)
	}
	sum := sha256.Sum256(data)
	out := filepath.Join(cacheDir, "images", fmt.Sprintf("%s-%s.tar", img.Program, hex.EncodeToString(sum[:6])))
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	image, err := imageFor(img, data)
	if err != nil {
		return "", fmt.Errorf("image %s: %w", img.Ref, err)
	}
	if err := WriteArchive(out, img.Ref, image); err != nil {
		return "", err
	}
	// Archives of earlier builds of the program are of no further use.
	older, _ := filepath.Glob(filepath.Join(cacheDir, "images", img.Program+"-*.tar"))
	for _, o := range older {
		if o != out {
			_ = os.Remove(o)
		}
	}
	return out, nil
}

func imageFor(img images.Image, binary []byte) (v1.Image, error) {
	return imageForArch(img, binary, runtime.GOARCH)
}

// imageForArch is img for linux/arch, holding binary (built for it).
func imageForArch(img images.Image, binary []byte, arch string) (v1.Image, error) {
	return ComposeFor(arch, [][]File{{{Path: "/tmp/", Mode: 0o1777}, {Path: "/" + img.Program, Mode: 0o755, Data: binary}}}, v1.Config{
		Entrypoint: []string{"/" + img.Program},
		Cmd:        img.Args,
		Env:        []string{"PATH=/"},
		WorkingDir: "/",
	})
}

// File is one entry of a layer: a directory (Path ends in "/"), a symlink
// (Link set) or a regular file (Data).
type File struct {
	Path string
	Mode int64
	Data []byte
	Link string
}

// Compose makes an image of layers (bottom first) and a configuration, for
// linux on this machine's architecture. Entries carry no times or owners
// (root), so equal inputs give equal images.
func Compose(layers [][]File, cfg v1.Config) (v1.Image, error) {
	return ComposeFor(runtime.GOARCH, layers, cfg)
}

// ComposeFor is Compose for linux/arch.
func ComposeFor(arch string, layers [][]File, cfg v1.Config) (v1.Image, error) {
	base, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		Architecture: arch,
		OS:           "linux",
		Config:       cfg,
		RootFS:       v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return nil, fmt.Errorf("image config: %w", err)
	}
	image := base
	for i, files := range layers {
		data, err := Tar(files)
		if err != nil {
			return nil, err
		}
		layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(data)), nil
		})
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		if image, err = mutate.AppendLayers(image, layer); err != nil {
			return nil, fmt.Errorf("append layer %d: %w", i, err)
		}
	}
	return image, nil
}

// WriteArchive writes image as a docker-archive tarball tagged ref, through
// a temporary file so that a partial archive never has the final name.
func WriteArchive(path, ref string, image v1.Image) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("image reference %q: %w", ref, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create image directory: %w", err)
	}
	tmp := path + ".partial"
	if err := tarball.WriteToFile(tmp, tag, image); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write image %s: %w", ref, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write image %s: %w", ref, err)
	}
	return nil
}

// Tar packs files, in their order, as a tar archive (an image layer, or
// files to unpack on a node).
func Tar(files []File) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: strings.TrimPrefix(f.Path, "/"), Mode: f.Mode}
		switch {
		case strings.HasSuffix(f.Path, "/"):
			h.Typeflag = tar.TypeDir
		case f.Link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, f.Link
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.Data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", f.Path, err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(f.Data); err != nil {
				return nil, fmt.Errorf("layer entry %s: %w", f.Path, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return buf.Bytes(), nil
}
