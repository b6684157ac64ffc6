package dockerd

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// serveDocker answers the Docker API's /_ping on a unix socket, as an
// engine of the machine (a GitHub-hosted runner's) does.
func serveDocker(t *testing.T, status int) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "docker.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/_ping" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte("OK"))
	})}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "unix://" + sock
}

// An engine that answers at $DOCKER_HOST is used as it is; one that does
// not answer is an error naming it, never a private daemon started instead.
func TestSelectUsesTheEngineDockerHostNames(t *testing.T) {
	host := serveDocker(t, http.StatusOK)
	t.Setenv("DOCKER_HOST", host)
	got, err := Select(context.Background())
	if err != nil || got != host {
		t.Fatalf("Select with a running engine at DOCKER_HOST: %q, %v", got, err)
	}

	t.Setenv("DOCKER_HOST", serveDocker(t, http.StatusServiceUnavailable))
	if _, err := Select(context.Background()); err == nil || !strings.Contains(err.Error(), "DOCKER_HOST=") {
		t.Fatalf("Select with an engine that answers 503: %v, want an error naming DOCKER_HOST", err)
	}
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "nothing.sock"))
	if _, err := Select(context.Background()); err == nil {
		t.Fatal("Select with nothing at DOCKER_HOST: no error")
	}
}
