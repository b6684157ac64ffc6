// Package registrylog is the access log of the registry kubeproof serves
// for a cluster (kubeproof registry serve --access-log): the registry
// writes one JSON line per request when it has answered it, the specs read
// them to see which of their images a node fetched, how many bytes and
// over which time, from the server's side of the link. It imports nothing
// of the project.
package registrylog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Request is one request the registry answered: one JSON line.
type Request struct {
	// Start is when the request arrived; Seconds how long it took to
	// answer, the body's last byte handed to the kernel included.
	Start   time.Time `json:"start"`
	Seconds float64   `json:"seconds"`
	// Remote is the client's address (host:port): a node's own address
	// for what its container runtime fetched.
	Remote string `json:"remote"`
	Method string `json:"method"`
	Path   string `json:"path"`
	Status int    `json:"status"`
	// Bytes is the size of the response body sent.
	Bytes int64 `json:"bytes"`
}

// End is when the registry had sent the answer.
func (r Request) End() time.Time {
	return r.Start.Add(time.Duration(r.Seconds * float64(time.Second)))
}

// Kind is what a request path names: "manifest", "blob", "upload" (a
// push), "version" (/v2/) or "other".
func (r Request) Kind() string {
	switch {
	case r.Path == "/v2/" || r.Path == "/v2":
		return "version"
	case strings.Contains(r.Path, "/blobs/uploads"):
		return "upload"
	case strings.Contains(r.Path, "/manifests/"):
		return "manifest"
	case strings.Contains(r.Path, "/blobs/"):
		return "blob"
	}
	return "other"
}

// Reference is the last element of the path: the tag or digest of a
// manifest, the digest of a blob.
func (r Request) Reference() string {
	p := r.Path
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return p[strings.LastIndexByte(p, '/')+1:]
}

// Read returns the requests logged in file from byte offset from on, and
// the offset after the last complete line (a line still being written is
// left for the next read).
func Read(file string, from int64) ([]Request, int64, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, from, fmt.Errorf("open the registry's access log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil, from, fmt.Errorf("read the registry's access log: %w", err)
	}
	var out []Request
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			return out, from, nil // an incomplete line is not consumed
		}
		if err != nil {
			return out, from, fmt.Errorf("read the registry's access log: %w", err)
		}
		from += int64(len(line))
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var req Request
		if err := json.Unmarshal(line, &req); err != nil {
			return out, from, fmt.Errorf("the registry's access log has a line that is not a request: %q: %w", strings.TrimSpace(string(line)), err)
		}
		out = append(out, req)
	}
}

// Size is the log's current size: where the next request's line starts.
func Size(file string) (int64, error) {
	st, err := os.Stat(file)
	if err != nil {
		return 0, fmt.Errorf("the registry's access log: %w", err)
	}
	return st.Size(), nil
}
