package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/internal/exitcode"
)

func newRegistryCommand(o *options) *cobra.Command {
	cmd := groupCommand("registry", "Serve an OCI registry on this machine (for clusters that pull kubeproof's images)", "")
	var listen []string
	var dir string
	var readOnly, verbose bool
	serve := &cobra.Command{
		Use:   "serve",
		Short: "Serve a plain-HTTP OCI registry until interrupted",
		Long: `serve runs an OCI distribution registry (go-containerregistry's) over plain HTTP on each
--listen address, blobs on disk in --dir, manifests in memory: what it holds lasts as
long as it runs. It is for clusters on this machine that pull kubeproof's images
(kubeproof image push --registry ADDR --insecure), and for air-gapped ones to mirror
from. Listen only on addresses of this machine: 127.0.0.1, and the bridge address a
kind network's nodes reach the host on. --read-only refuses every push (405).`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(listen) == 0 {
				return exitcode.Errorf(exitcode.Usage, "--listen is required")
			}
			if dir == "" {
				dir = filepath.Join(o.CacheDir, "registry")
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("registry directory: %w", err)
			}
			logTo := io.Discard
			if verbose {
				logTo = os.Stderr
			}
			handler := registry.New(registry.WithBlobHandler(registry.NewDiskBlobHandler(dir)),
				registry.Logger(log.New(logTo, "registry: ", log.LstdFlags)))
			if readOnly {
				handler = refuseWrites(handler)
			}
			return serveRegistry(cmd.Context(), listen, handler)
		},
	}
	f := serve.Flags()
	f.StringSliceVar(&listen, "listen", nil, "address to listen on, host:port (repeatable)")
	f.StringVar(&dir, "dir", "", "directory for the blobs (default <cache-dir>/registry)")
	f.BoolVar(&readOnly, "read-only", false, "refuse pushes")
	f.BoolVarP(&verbose, "verbose", "v", false, "log every request")
	cmd.AddCommand(serve)
	return cmd
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

// serveRegistry serves handler on every address until ctx ends.
func serveRegistry(ctx context.Context, addrs []string, handler http.Handler) error {
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
		printer().Infof("registry serving on http://%s", l.Addr())
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
