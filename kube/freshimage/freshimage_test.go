package freshimage

import (
	"archive/tar"
	"context"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/contract/registrylog"
)

// A fresh image has the base image's files and configuration, and one
// layer of its own: two fresh images share no blob with each other or
// with the base, so a node that has one downloads all of the next.
func TestPush(t *testing.T) {
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	base, err := random.Image(50_000, 2)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := base.ConfigFile()
	cfg.Config.Entrypoint = []string{"/kubeproof-testapp"}
	if base, err = mutate.ConfigFile(base, cfg); err != nil {
		t.Fatal(err)
	}
	baseRef, _ := name.NewTag(addr+"/kubeproof/testapp:v1", name.Insecure)
	if err := remote.Write(baseRef, base); err != nil {
		t.Fatal(err)
	}
	reg := &cluster.PullRegistry{Address: addr, Base: baseRef.String()}
	ctx := context.Background()
	a, err := Push(ctx, reg, "ns-a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Push(ctx, reg, "ns-b")
	if err != nil {
		t.Fatal(err)
	}
	if a.Ref != addr+"/"+Repository+":ns-a" || a.At("10.0.0.1:5001") != "10.0.0.1:5001/"+Repository+":ns-a" {
		t.Errorf("names: %s, %s", a.Ref, a.At("10.0.0.1:5001"))
	}
	baseLayers, _ := base.Layers()
	for _, l := range baseLayers {
		d, _ := l.Digest()
		if slices.Contains(a.Blobs, d.String()) {
			t.Errorf("the fresh image shares the base's layer %s", d)
		}
	}
	for _, blob := range a.Blobs {
		if slices.Contains(b.Blobs, blob) {
			t.Errorf("two fresh images share blob %s", blob)
		}
	}
	if len(a.Blobs) != 2 || a.Bytes <= 50_000 || a.ManifestBytes == 0 {
		t.Errorf("image %+v: want a config and one layer, holding the base's 100 kB", a)
	}

	ref, _ := name.ParseReference(a.Ref, name.Insecure)
	img, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := img.ConfigFile()
	if !slices.Equal(got.Config.Entrypoint, []string{"/kubeproof-testapp"}) {
		t.Errorf("entrypoint %v, want the base's", got.Config.Entrypoint)
	}
	layers, _ := img.Layers()
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	files := 0
	own := ""
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files++
		if h.Name == "kubeproof-image" {
			data, _ := io.ReadAll(tr)
			own = string(data)
		}
	}
	if own != "ns-a\n" || files < 3 {
		t.Errorf("layer: %d files, kubeproof-image %q", files, own)
	}
}

// The requests for an image are those for its tag or digest and its blobs
// (GET or HEAD): another image's, and pushes, are not.
func TestFetchOf(t *testing.T) {
	img := Image{Tag: "ns-a", Digest: "sha256:m", Blobs: []string{"sha256:c", "sha256:l"}}
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	req := func(ms int, method, path string, bytes int64, remote string) registrylog.Request {
		return registrylog.Request{Start: at.Add(time.Duration(ms) * time.Millisecond), Seconds: 0.01, Method: method, Path: path, Status: 200, Bytes: bytes, Remote: remote}
	}
	reqs := []registrylog.Request{
		req(0, "PUT", "/v2/kubeproof/fresh/manifests/ns-a", 0, "10.250.0.1:1"),
		req(5, "HEAD", "/v2/kubeproof/fresh/manifests/ns-a", 0, "10.250.0.2:40000"),
		req(10, "GET", "/v2/kubeproof/fresh/manifests/sha256:m", 500, "10.250.0.2:40000"),
		req(20, "GET", "/v2/kubeproof/fresh/blobs/sha256:c", 300, "10.250.0.2:40001"),
		req(30, "GET", "/v2/kubeproof/fresh/blobs/sha256:l", 3000, "10.250.0.2:40002"),
		req(40, "GET", "/v2/kubeproof/fresh/blobs/sha256:other", 9999, "10.250.0.2:40003"),
		req(50, "GET", "/v2/kubeproof/fresh/manifests/ns-b", 500, "10.250.0.2:40004"),
	}
	f := FetchOf(reqs, img)
	if f.ManifestRequests != 2 || f.BlobRequests != 2 || f.BlobBytes != 3300 || !slices.Equal(f.Clients, []string{"10.250.0.2"}) {
		t.Errorf("fetch %+v", f)
	}
	if !f.Start.Equal(at.Add(5*time.Millisecond)) || f.Seconds() < 0.034 || f.Seconds() > 0.036 {
		t.Errorf("fetch from %s, %.3f s", f.Start, f.Seconds())
	}
}

func TestWholeCountsBlobsNotTheManifest(t *testing.T) {
	img := Image{Bytes: 1000, ManifestBytes: 100}
	for _, c := range []struct {
		sent int64
		want bool
	}{{0, false}, {899, false}, {900, true}, {1000, true}} {
		if got := (Fetch{BlobBytes: c.sent}).Whole(img); got != c.want {
			t.Errorf("%d of 900 blob bytes sent: Whole = %v, want %v", c.sent, got, c.want)
		}
	}
}
