package ociregistry

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
)

// lines hands each line the printer writes to the test.
type lines chan string

func (l lines) Write(b []byte) (int, error) {
	l <- string(b)
	return len(b), nil
}

// serveHere serves the registry on a free loopback port and returns its
// URL, as the printer names it, and the function that stops it.
func serveHere(t *testing.T, o Options) (string, func() error) {
	t.Helper()
	o.Listen, o.Dir = []string{"127.0.0.1:0"}, t.TempDir()
	out := make(lines, 10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, o, progress.New(out)) }()
	select {
	case line := <-out:
		m := regexp.MustCompile(`registry serving on (http://\S+)`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("printed %q", line)
		}
		return m[1], func() error { cancel(); return <-done }
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the registry did not start in 30s")
	}
	return "", nil
}

func request(t *testing.T, method, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// The registry answers the distribution API, takes uploads, and stops when
// its context ends.
func TestServe(t *testing.T) {
	url, stop := serveHere(t, Options{})
	if code, _ := request(t, http.MethodGet, url+"/v2/"); code != http.StatusOK {
		t.Errorf("GET /v2/: %d", code)
	}
	if code, _ := request(t, http.MethodPost, url+"/v2/kubeproof/testapp/blobs/uploads/"); code != http.StatusAccepted {
		t.Errorf("an upload: %d", code)
	}
	if err := stop(); err != nil {
		t.Errorf("stopped: %v", err)
	}
}

// A read-only registry refuses every write with 405, and serves reads.
func TestReadOnly(t *testing.T) {
	url, stop := serveHere(t, Options{ReadOnly: true})
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("stopped: %v", err)
		}
	}()
	code, body := request(t, http.MethodPost, url+"/v2/kubeproof/testapp/blobs/uploads/")
	if code != http.StatusMethodNotAllowed || !strings.Contains(body, "this registry is read-only") {
		t.Errorf("an upload: %d %s", code, body)
	}
	if code, _ := request(t, http.MethodGet, url+"/v2/"); code != http.StatusOK {
		t.Errorf("GET /v2/: %d", code)
	}
}

// An address already taken is a conflict, with its own exit code.
func TestAddressTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// Bad input leaves nothing behind: neither the blobs' directory nor
	// the access log is made for a registry that cannot listen.
	tmp := t.TempDir()
	o := Options{Listen: []string{"127.0.0.1:0"}, Shaped: []string{l.Addr().String()}, ShapedRate: 1,
		Dir: filepath.Join(tmp, "blobs"), AccessLog: filepath.Join(tmp, "access.jsonl")}
	err = Serve(context.Background(), o, progress.Discard())
	if exitcode.Of(err) != exitcode.Conflict {
		t.Errorf("a taken address: %v (exit code %d)", err, exitcode.Of(err))
	}
	// An access log it cannot open: the directory it made goes again.
	o.Shaped, o.AccessLog = nil, filepath.Join(tmp, "no-such-dir", "access.jsonl")
	if err := Serve(context.Background(), o, progress.Discard()); err == nil {
		t.Error("an access log in a missing directory was opened")
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		t.Errorf("bad input left %s in %s", entries[0].Name(), tmp)
	}
}
