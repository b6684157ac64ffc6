package imagebuild

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"

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
	ref, pushed, err := b.Push(context.Background(), reg, true)
	if err != nil || !pushed {
		t.Fatalf("first push: pushed=%v err=%v", pushed, err)
	}
	if ref != reg+"/testapp:v1" {
		t.Errorf("ref = %s", ref)
	}
	if _, pushed, err := b.Push(context.Background(), reg, true); err != nil || pushed {
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
		_, _, err := testBuilt(t).Push(ctx, reg, true)
		cancel()
		if code := exitcode.Of(err); code != exitcode.Registry {
			t.Errorf("%s: exit code %v (%v), want %v", name, code, err, exitcode.Registry)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error is not one line: %q", name, err)
		}
	}
}
