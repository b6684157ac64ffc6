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
	"io/fs"
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
	// AccessLog, if set, is a file each answered request is appended to
	// as a JSON line (package registrylog's format).
	AccessLog string
	// Shaped are more host:port addresses, each served at most
	// ShapedRate bytes per second: the same registry over a slow link.
	Shaped     []string
	ShapedRate int64
	// Rate, if above 0, is the most bytes per second the Listen
	// addresses send (a registry whose every link is slow).
	Rate int64
}

// Serve serves the registry on every address until ctx ends. Bad input
// (a shaped address without a rate, an address taken or not of this
// machine, an access log or directory it cannot write) leaves nothing
// behind: the addresses are bound first, and a directory Serve made is
// removed again if the access log cannot be opened.
func Serve(ctx context.Context, o Options, pr *progress.Printer) error {
	if len(o.Shaped) > 0 && o.ShapedRate <= 0 {
		return exitcode.Errorf(exitcode.Usage, "a shaped address needs a rate above 0")
	}
	listeners, err := listenAll(append(append([]string{}, o.Listen...), o.Shaped...))
	if err != nil {
		return err
	}
	closeAll := func() {
		for _, nl := range listeners {
			_ = nl.Close()
		}
	}
	_, statErr := os.Stat(o.Dir)
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		closeAll()
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
	if o.AccessLog != "" {
		al, err := openAccessLog(o.AccessLog)
		if err != nil {
			closeAll()
			if errors.Is(statErr, fs.ErrNotExist) {
				_ = os.Remove(o.Dir) // made above, still empty
			}
			return err
		}
		defer al.Close()
		handler = al.wrap(handler)
	}
	var ls []listen
	for _, nl := range listeners[:len(o.Listen)] {
		if o.Rate > 0 {
			ls = append(ls, listen{l: nl, handler: shaped(handler, o.Rate), rate: o.Rate})
			continue
		}
		ls = append(ls, listen{l: nl, handler: handler})
	}
	for _, nl := range listeners[len(o.Listen):] {
		ls = append(ls, listen{l: nl, handler: shaped(handler, o.ShapedRate), rate: o.ShapedRate})
	}
	return serve(ctx, ls, pr)
}

// listenAll binds every address, or none: a taken one is a Conflict.
func listenAll(addrs []string) ([]net.Listener, error) {
	var listeners []net.Listener
	for _, a := range addrs {
		nl, err := net.Listen("tcp", a)
		if err != nil {
			for _, nl := range listeners {
				_ = nl.Close()
			}
			return nil, exitcode.Errorf(exitcode.Conflict, "listen on %s: %v", a, err)
		}
		listeners = append(listeners, nl)
	}
	return listeners, nil
}

// listen is one address served, and how.
type listen struct {
	l       net.Listener
	handler http.Handler
	rate    int64
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

// serve serves every address until ctx ends.
func serve(ctx context.Context, ls []listen, pr *progress.Printer) error {
	var servers []*http.Server
	errc := make(chan error, len(ls))
	for _, l := range ls {
		srv := &http.Server{Handler: l.handler, ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, srv)
		if l.rate > 0 {
			pr.Infof("registry serving on http://%s at most %d bytes/s", l.l.Addr(), l.rate)
		} else {
			pr.Infof("registry serving on http://%s", l.l.Addr())
		}
		go func() { errc <- srv.Serve(l.l) }()
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serve the registry: %w", err)
	case <-ctx.Done():
		// Answers under way get a moment to end; a connection a client
		// opened and never used would hold Shutdown for 5 s (net/http
		// waits that long for a new connection's first request), so what
		// is left then is closed.
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		var errs []error
		for _, srv := range servers {
			if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
				if cerr := srv.Close(); cerr != nil {
					errs = append(errs, cerr)
				}
			}
		}
		return errors.Join(errs...)
	}
}
