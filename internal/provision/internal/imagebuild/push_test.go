package imagebuild

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/internal/exitcode"
)

func testBuilt(t *testing.T) Built {
	t.Helper()
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return Built{Image: images.TestApp, Digest: d, image: img}
}

func TestPushOnceThenAlreadyThere(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	reg := strings.TrimPrefix(srv.URL, "http://") + "/kubeproof"
	b := testBuilt(t)
	ref, pushed, err := b.Push(context.Background(), reg, "v0.2.0", true)
	if err != nil || !pushed {
		t.Fatalf("first push: pushed=%v err=%v", pushed, err)
	}
	if ref != reg+"/testapp:v0.2.0" {
		t.Errorf("ref = %s", ref)
	}
	if _, pushed, err := b.Push(context.Background(), reg, "v0.2.0", true); err != nil || pushed {
		t.Errorf("second push: pushed=%v err=%v, want it found there", pushed, err)
	}
}

func TestPushRefusedOrUnreachable(t *testing.T) {
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			registry.New(registry.Logger(log.New(io.Discard, "", 0))).ServeHTTP(w, r)
			return
		}
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"errors":[{"code":"DENIED","message":"no pushes here"}]}`))
	}))
	defer refusing.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	unreachable := strings.TrimPrefix(closed.URL, "http://")
	closed.Close()

	for name, reg := range map[string]string{
		"refused":     strings.TrimPrefix(refusing.URL, "http://") + "/kubeproof",
		"unreachable": unreachable + "/kubeproof",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, _, err := testBuilt(t).Push(ctx, reg, "v1", true)
		cancel()
		if code := exitcode.Of(err); code != exitcode.Registry {
			t.Errorf("%s: exit code %v (%v), want %v", name, code, err, exitcode.Registry)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error is not one line: %q", name, err)
		}
	}
}

// A release publishes each image as one index of its platforms, each with
// that platform's program at /<program>; a program built for another
// architecture than its platform is refused, never packed.
func TestPushPlatforms(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	reg := strings.TrimPrefix(srv.URL, "http://") + "/kubeproof"
	dirs := map[string]string{}
	for _, arch := range []string{"amd64", "arm64"} {
		dirs[arch] = t.TempDir()
		build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", dirs[arch]+"/", "../../../../cmd/kubeproof-pause")
		build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build for %s: %v: %s", arch, err, out)
		}
	}
	ctx := context.Background()
	ref, digest, pushed, err := PushPlatforms(ctx, images.Pause, dirs, reg, "v0.2.0", true)
	if err != nil || !pushed || ref != reg+"/pause:v0.2.0" {
		t.Fatalf("push: %s %v %v", ref, pushed, err)
	}
	tag, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	index, err := remote.Index(tag)
	if err != nil {
		t.Fatalf("read the index back: %v", err)
	}
	if d, _ := index.Digest(); d != digest {
		t.Errorf("the registry holds %s, pushed %s", d, digest)
	}
	manifest, err := index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, m := range manifest.Manifests {
		platforms = append(platforms, m.Platform.String())
		img, err := index.Image(m.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Architecture != m.Platform.Architecture || cfg.OS != "linux" || cfg.Config.Entrypoint[0] != "/kubeproof-pause" {
			t.Errorf("%s: config says %s/%s, entrypoint %v", m.Platform, cfg.OS, cfg.Architecture, cfg.Config.Entrypoint)
		}
	}
	if strings.Join(platforms, " ") != "linux/amd64 linux/arm64" {
		t.Errorf("platforms %v", platforms)
	}
	if _, _, pushed, err := PushPlatforms(ctx, images.Pause, dirs, reg, "v0.2.0", true); err != nil || pushed {
		t.Errorf("the same index again: pushed=%v err=%v, want it found there", pushed, err)
	}
	// arm64's program under amd64's name.
	swapped := map[string]string{"amd64": dirs["arm64"], "arm64": dirs["arm64"]}
	if _, _, _, err := PushPlatforms(ctx, images.Pause, swapped, reg, "v0.3.0", true); err == nil || !strings.Contains(err.Error(), "not amd64") {
		t.Errorf("an arm64 program as amd64's: %v", err)
	}
}
