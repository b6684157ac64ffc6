package ociregistry

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubeproof/kubeproof/contract/registrylog"
	"github.com/kubeproof/kubeproof/internal/progress"
)

// freeAddr is a loopback address nothing listens on (a moment ago).
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// serveFor serves o until the test ends, once it answers: Serve prints a
// line for each address once it is bound (a connection then waits in the
// listener's queue until the server takes it).
func serveFor(t *testing.T, o Options) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	addrs := append(append([]string{}, o.Listen...), o.Shaped...)
	out := make(lines, len(addrs)+10)
	go func() { done <- Serve(ctx, o, progress.New(out)) }()
	for range addrs {
		select {
		case <-out:
		case err := <-done:
			t.Fatalf("Serve: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatalf("the registry did not bind %v within 30 s", addrs)
		}
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
}

// Every request answered is a line of the access log: who asked, what,
// the status and the body's size; a push is logged as uploads, a pull as
// manifest and blob reads.
func TestAccessLog(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	logFile := filepath.Join(dir, "access.jsonl")
	serveFor(t, Options{Listen: []string{addr}, Dir: filepath.Join(dir, "blobs"), AccessLog: logFile})
	img, err := random.Image(100_000, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.NewTag(addr+"/t/img:v1", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	mark, err := registrylog.Size(logFile)
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	digest, _ := layers[0].Digest()
	size, _ := layers[0].Size()
	resp, err := http.Get(fmt.Sprintf("http://%s/v2/t/img/blobs/%s", addr, digest))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	reqs, _, err := registrylog.Read(logFile, 0)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, r := range reqs {
		kinds[r.Kind()]++
	}
	if kinds["upload"] == 0 || kinds["manifest"] == 0 {
		t.Errorf("the push is not in the log: %v", kinds)
	}
	after, _, err := registrylog.Read(logFile, mark)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 1 {
		t.Fatalf("after the push, %d requests: %+v", len(after), after)
	}
	r := after[0]
	if r.Method != "GET" || r.Kind() != "blob" || r.Reference() != digest.String() || r.Status != 200 || r.Bytes != size ||
		!strings.HasPrefix(r.Remote, "127.0.0.1:") || r.Seconds <= 0 || r.Start.IsZero() {
		t.Errorf("the blob's read: %+v (want GET %s, %d bytes)", r, digest, size)
	}
}

// A shaped address sends no faster than its rate; the same registry at
// full speed is not held back.
func TestShaped(t *testing.T) {
	dir := t.TempDir()
	full, slow := freeAddr(t), freeAddr(t)
	const rate = 256 << 10
	serveFor(t, Options{Listen: []string{full}, Shaped: []string{slow}, ShapedRate: rate, Dir: filepath.Join(dir, "blobs")})
	img, err := random.Image(512<<10, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := name.NewTag(full+"/t/img:v1", name.Insecure)
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	digest, _ := layers[0].Digest()
	size, _ := layers[0].Size()
	fetch := func(addr string) time.Duration {
		start := time.Now()
		resp, err := http.Get(fmt.Sprintf("http://%s/v2/t/img/blobs/%s", addr, digest))
		if err != nil {
			t.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if n != size {
			t.Fatalf("%s sent %d bytes of %d", addr, n, size)
		}
		return time.Since(start)
	}
	// The last chunk leaves once the bytes before it had their time.
	least := time.Duration(float64(size-chunk) / rate * float64(time.Second))
	if took := fetch(slow); took < least {
		t.Errorf("the shaped address sent %d bytes in %s, faster than %d bytes/s (at least %s)", size, took, rate, least)
	}
	if took := fetch(full); took >= least {
		t.Errorf("the full-speed address took %s for %d bytes", took, size)
	}

	// --rate slows the --listen addresses too.
	limited := freeAddr(t)
	serveFor(t, Options{Listen: []string{limited}, Rate: rate, Dir: filepath.Join(dir, "blobs")})
	ref, _ = name.NewTag(limited+"/t/img:v1", name.Insecure)
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	if took := fetch(limited); took < least {
		t.Errorf("with a rate, the listen address sent %d bytes in %s, faster than %d bytes/s", size, took, rate)
	}
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]int64{"512k": 512 << 10, "4M": 4 << 20, "1000": 1000, "1.5M": 3 << 19, "2MB/s": 2 << 20, "0": 0} {
		if got, err := ParseRate(in); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "fast", "-1k", "4T"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) accepted", bad)
		}
	}
}
