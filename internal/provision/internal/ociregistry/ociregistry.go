// Package ociregistry serves an OCI distribution registry on this machine
// (kubeproof registry serve): go-containerregistry's, over plain HTTP,
// blobs on disk, manifests in memory, for clusters here that pull
// kubeproof's images and for air-gapped ones to mirror from.
package ociregistry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
)

// Options say where the registry listens and keeps its blobs.
type Options struct {
	// Listen are host:port addresses, each served.
	Listen []string
	// Dir holds the blobs; it is made if missing.
	Dir string
	// ReadOnly refuses every push (405).
	ReadOnly bool
	// Verbose logs every request to stderr.
	Verbose bool
}

// Serve serves the registry on every address until ctx ends.
func Serve(ctx context.Context, o Options, pr *progress.Printer) error {
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return fmt.Errorf("registry directory: %w", err)
	}
	logTo := io.Discard
	if o.Verbose {
		logTo = os.Stderr
	}
	handler := registry.New(registry.WithBlobHandler(registry.NewDiskBlobHandler(o.Dir)),
		registry.Logger(log.New(logTo, "registry: ", log.LstdFlags)))
	if o.ReadOnly {
		handler = refuseWrites(handler)
	}
	return serve(ctx, o.Listen, handler, pr)
}

// refuseWrites answers every request but reads with 405, as a registry that
// only mirrors does.
func refuseWrites(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, `{"errors":[{"code":"UNSUPPORTED","message":"this registry is read-only"}]}`, http.StatusMethodNotAllowed)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serve serves handler on every address until ctx ends.
func serve(ctx context.Context, addrs []string, handler http.Handler, pr *progress.Printer) error {
	var listeners []net.Listener
	for _, a := range addrs {
		l, err := net.Listen("tcp", a)
		if err != nil {
			for _, l := range listeners {
				_ = l.Close()
			}
			return exitcode.Errorf(exitcode.Conflict, "listen on %s: %v", a, err)
		}
		listeners = append(listeners, l)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, len(listeners))
	for _, l := range listeners {
		pr.Infof("registry serving on http://%s", l.Addr())
		go func(l net.Listener) { errc <- srv.Serve(l) }(l)
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serve the registry: %w", err)
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}
