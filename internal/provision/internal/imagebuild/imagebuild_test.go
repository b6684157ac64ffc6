package imagebuild

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/internal/exitcode"
)

func TestBuildWritesALoadableImage(t *testing.T) {
	programs, cache := t.TempDir(), t.TempDir()
	img := images.Image{Ref: "kubeproof.local/test:v1", Program: "prog", Args: []string{"serve"}}
	if err := os.WriteFile(filepath.Join(programs, "prog"), []byte("#!binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	path, err := Build(img, programs, cache)
	if err != nil {
		t.Fatal(err)
	}
	tag, _ := name.NewTag(img.Ref)
	loaded, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	cfg, err := loaded.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != "/prog" || cfg.Config.Cmd[0] != "serve" {
		t.Fatalf("config %+v", cfg.Config)
	}
	layers, err := loaded.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d, %v", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	found := false
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == "prog" {
			found = h.Mode&0o111 != 0
		}
	}
	if !found {
		t.Fatal("layer lacks the executable program")
	}
	// Unchanged program: the same file is reused.
	again, err := Build(img, programs, cache)
	if err != nil || again != path {
		t.Fatalf("rebuild: %s, %v (want %s)", again, err, path)
	}
}

func TestBuildWithoutProgram(t *testing.T) {
	_, err := Build(images.TestApp, t.TempDir(), t.TempDir())
	if exitcode.Of(err) != exitcode.MissingTool {
		t.Fatalf("exit code %v: %v", exitcode.Of(err), err)
	}
}

// Images never use "latest": pods would then try to pull them.
func TestNoLatestTags(t *testing.T) {
	for _, img := range images.All {
		tag, err := name.NewTag(img.Ref)
		if err != nil {
			t.Fatal(err)
		}
		if tag.TagStr() == "latest" {
			t.Errorf("%s uses latest", img.Ref)
		}
	}
}
