package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// The gRPC health service answers a real gRPC client (the kubelet's grpc
// probe is one): SERVING while /healthz would pass, NOT_SERVING after
// healthy=false.
func TestGRPCHealth(t *testing.T) {
	st := newState(true, true, 0)
	x := extras{grpc: freeAddr(t)}
	errc := make(chan error, 1)
	if err := x.start(st, errc); err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(x.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	check := func() healthpb.HealthCheckResponse_ServingStatus {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		res, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatalf("Check: %v", err)
		}
		return res.GetStatus()
	}
	if s := check(); s != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("healthy: %s", s)
	}
	st.mu.Lock()
	st.healthy = false
	st.mu.Unlock()
	if s := check(); s != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("not healthy: %s", s)
	}
}

// A TCP port that accepts and closes at once: a connection succeeds, and
// reads nothing.
func TestTCPClose(t *testing.T) {
	x := extras{tcpClose: freeAddr(t)}
	if err := x.start(newState(true, true, 0), make(chan error, 1)); err != nil {
		t.Fatal(err)
	}
	c, err := net.DialTimeout("tcp", x.tcpClose, 5*time.Second)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := c.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("read = %d, %v; want EOF at once", n, err)
	}
}

// A file that exists for a while, read by cat; write and rm for exec hooks.
func TestFiles(t *testing.T) {
	f := filepath.Join(t.TempDir(), "healthy")
	x := extras{touch: f, touchFor: 200 * time.Millisecond}
	if err := x.start(newState(true, true, 0), make(chan error, 1)); err != nil {
		t.Fatal(err)
	}
	if err := catMode([]string{f}); err != nil {
		t.Errorf("cat right after start: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for catMode([]string{f}) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the --touch file is still there 5 s after --touch-for 200ms")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := writeMode([]string{f, "hello", "there"}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(f); string(data) != "hello there\n" {
		t.Errorf("write: %q", data)
	}
	if err := rmMode([]string{f}); err != nil || catMode([]string{f}) == nil {
		t.Errorf("rm: %v", err)
	}
}

func TestRedirect(t *testing.T) {
	srv := httptest.NewServer(newHandler(newState(true, true, 0), "", discardLog(t)))
	defer srv.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for q, want := range map[string]int{"?to=/healthz": 302, "?to=/healthz&code=301": 301, "?to=http://elsewhere/&code=307": 307, "?code=302": 400, "?to=/&code=200": 400} {
		res, err := client.Get(srv.URL + "/redirect" + q)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("%s: %d, want %d", q, res.StatusCode, want)
		}
	}
}

// The registry serves images of this program, behind basic authentication
// when asked: without credentials 401, with them the images, one with the
// STOPSIGNAL asked for.
func TestRegistry(t *testing.T) {
	exe, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	reg := &registry{user: "u", password: "p", blobs: map[string][]byte{}, manifests: map[string]manifest{}}
	if err := reg.add("testapp", "v1", exe[:4096], ""); err != nil {
		t.Fatal(err)
	}
	if err := reg.add("testapp-stopsignal", "v1", exe[:4096], "SIGUSR1"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(reg)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	ref, err := name.ParseReference(host+"/testapp-stopsignal:v1", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	_, err = remote.Image(ref)
	var terr *transport.Error
	if !errors.As(err, &terr) || terr.StatusCode != 401 {
		t.Fatalf("without credentials: %v", err)
	}
	img, err := remote.Image(ref, remote.WithAuth(&authn.Basic{Username: "u", Password: "p"}))
	if err != nil {
		t.Fatalf("with credentials: %v", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.StopSignal != "SIGUSR1" || cfg.Config.Entrypoint[0] != "/kubeproof-testapp" {
		t.Errorf("config: %+v", cfg.Config)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %v %v", layers, err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if data, err := io.ReadAll(rc); err != nil || !strings.Contains(string(data), "kubeproof-testapp") {
		t.Errorf("layer: %d bytes, %v", len(data), err)
	}
}
