// Package images turns this repository's Go programs into container images
// without a registry or a Docker engine: one layer holding one static binary,
// written as a docker-archive tarball that containerd (ctr import) and kind
// (LoadImageArchive) accept.
package images

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

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/kubeproof/kubeproof/framework/exitcode"
)

// Image is one of our images: a program from cmd/ packed as /<Program>.
type Image struct {
	// Ref is the image reference pods use. The tag is never "latest", so the
	// default imagePullPolicy is IfNotPresent and nothing is pulled.
	Ref string
	// Program is the file name of the binary (built by `make build` next to
	// the kubeproof binary).
	Program string
	// Args are the default arguments after the program.
	Args []string
}

var (
	// Pause is the pod sandbox image (containerd's sandbox_image).
	Pause = Image{Ref: "kubeproof.local/pause:v1", Program: "kubeproof-pause"}
	// TestApp is the workload image of every suite.
	TestApp = Image{Ref: "kubeproof.local/testapp:v1", Program: "kubeproof-testapp", Args: []string{"serve"}}
	// Webhook is kubeproof's admission webhook server (package webhooks).
	Webhook = Image{Ref: "kubeproof.local/webhook:v1", Program: "kubeproof-webhook"}
)

// All are the images every cluster gets.
var All = []Image{Pause, TestApp, Webhook}

// ProgramDir is where the image programs are looked for: $KUBEPROOF_PROGRAM_DIR,
// else the directory of the running executable.
func ProgramDir() (string, error) {
	if d := os.Getenv("KUBEPROOF_PROGRAM_DIR"); d != "" {
		return d, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("locate kubeproof executable: %w", err)
	}
	exe, err = filepath.EvalSymlinks(exe)
	if err != nil {
		return "", fmt.Errorf("locate kubeproof executable: %w", err)
	}
	return filepath.Dir(exe), nil
}

// Build writes img as a docker-archive tarball under cacheDir/images and
// returns its path. The file name carries a hash of the binary, so an
// unchanged program is not packed again.
func Build(img Image, programDir, cacheDir string) (string, error) {
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
		return "", err
	}
	tag, err := name.NewTag(img.Ref)
	if err != nil {
		return "", fmt.Errorf("image reference %q: %w", img.Ref, err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", fmt.Errorf("create image cache: %w", err)
	}
	tmp := out + ".partial"
	if err := tarball.WriteToFile(tmp, tag, image); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("write image %s: %w", img.Ref, err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", fmt.Errorf("write image %s: %w", img.Ref, err)
	}
	return out, nil
}

func imageFor(img Image, binary []byte) (v1.Image, error) {
	layerTar, err := singleFileTar("/"+img.Program, binary)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("image %s: layer: %w", img.Ref, err)
	}
	base, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		Architecture: runtime.GOARCH,
		OS:           "linux",
		Config: v1.Config{
			Entrypoint: []string{"/" + img.Program},
			Cmd:        img.Args,
			Env:        []string{"PATH=/"},
			WorkingDir: "/",
		},
		RootFS: v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return nil, fmt.Errorf("image %s: config: %w", img.Ref, err)
	}
	image, err := mutate.AppendLayers(base, layer)
	if err != nil {
		return nil, fmt.Errorf("image %s: append layer: %w", img.Ref, err)
	}
	return image, nil
}

// singleFileTar makes a layer with one executable file and a /tmp directory
// (some programs expect it). Times are zero so the layer is reproducible.
func singleFileTar(path string, data []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: "tmp/", Typeflag: tar.TypeDir, Mode: 0o1777}); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	if err := tw.WriteHeader(&tar.Header{Name: path[1:], Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(data))}); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	if _, err := tw.Write(data); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return buf.Bytes(), nil
}
