package ociregistry

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/kubeproof/kubeproof/contract/registrylog"
)

// accessLog appends one line per answered request to a file (the format
// of package registrylog), so that the specs see which of their images a
// node fetched, from the server's side.
type accessLog struct {
	mu sync.Mutex
	f  *os.File
}

func openAccessLog(path string) (*accessLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open the access log: %w", err)
	}
	return &accessLog{f: f}, nil
}

func (a *accessLog) Close() error { return a.f.Close() }

// wrap logs every request next serves; one whole line per write, so that
// a reader never sees two requests' lines interleaved.
func (a *accessLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		cw := &countingWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(cw, r)
		line, err := json.Marshal(registrylog.Request{
			Start: start, Seconds: time.Since(start).Seconds(), Remote: r.RemoteAddr,
			Method: r.Method, Path: r.URL.Path, Status: cw.status, Bytes: cw.bytes,
		})
		if err != nil {
			return
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		_, _ = a.f.Write(append(line, '\n'))
	})
}

// countingWriter counts the body bytes a handler writes and keeps its
// status.
type countingWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (c *countingWriter) WriteHeader(code int) {
	c.status = code
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.bytes += int64(n)
	return n, err
}
