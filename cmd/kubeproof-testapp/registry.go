package main

import (
	"archive/tar"
	"bytes"
	"crypto/subtle"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// registryMode serves, read-only, images made of this very program, so
// that a node pulls an image kubeproof did not load into it: testapp:v1
// (the program, as kubeproof.local/testapp:v1 has it) and
// testapp-stopsignal:v1 (the same with STOPSIGNAL --stop-signal in its
// configuration). With --user and --password every request needs them
// (HTTP basic authentication, as a registry that needs credentials asks
// for them): a Pod pulls only with an imagePullSecret. Run in a Pod with
// hostNetwork and --listen 127.0.0.1:PORT, it is the node's localhost
// registry, which a container runtime reaches over plain HTTP.
func registryMode(args []string) error {
	fs := flag.NewFlagSet("registry", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:5000", "address to listen on")
	user := fs.String("user", "", "the user every request must authenticate as (none: no authentication)")
	password := fs.String("password", "", "its password")
	stopSignal := fs.String("stop-signal", "SIGINT", "the STOPSIGNAL of testapp-stopsignal:v1")
	readyFile := fs.String("ready-file", "", "a file written once the registry listens (for an exec readiness probe)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (*user == "") != (*password == "") {
		return fmt.Errorf("registry: give --user and --password together")
	}
	exe, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		return fmt.Errorf("registry: read this program: %w", err)
	}
	reg := &registry{user: *user, password: *password, blobs: map[string][]byte{}, manifests: map[string]manifest{}}
	for name, stop := range map[string]string{"testapp": "", "testapp-stopsignal": *stopSignal} {
		if err := reg.add(name, "v1", exe, stop); err != nil {
			return fmt.Errorf("registry: image %s: %w", name, err)
		}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("registry: listen on %s: %w", *listen, err)
	}
	fmt.Fprintf(os.Stderr, "%s: registry on %s (authentication: %t)\n", AppName, ln.Addr(), *user != "")
	if *readyFile != "" {
		if err := os.WriteFile(*readyFile, []byte("ok\n"), 0o644); err != nil {
			return fmt.Errorf("registry: --ready-file: %w", err)
		}
	}
	srv := &http.Server{Handler: reg, ReadHeaderTimeout: 10 * time.Second}
	return srv.Serve(ln)
}

// registry is a read-only OCI distribution registry of a few images, held
// in memory.
type registry struct {
	user, password string
	// blobs by digest; manifests by "name:reference" (tag or digest).
	blobs     map[string][]byte
	manifests map[string]manifest
}

type manifest struct {
	data      []byte
	mediaType string
	digest    string
}

// add makes an image of the program (as kubeproof's image builder does: the
// program at /kubeproof-testapp, an empty /tmp) and holds it under name:tag.
func (g *registry) add(name, tag string, program []byte, stopSignal string) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct {
		name string
		mode int64
		data []byte
		dir  bool
	}{{name: "tmp/", mode: 0o1777, dir: true}, {name: "kubeproof-testapp", mode: 0o755, data: program}} {
		h := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if f.dir {
			h.Typeflag = tar.TypeDir
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		return err
	}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{Architecture: runtime.GOARCH, OS: "linux", RootFS: v1.RootFS{Type: "layers"},
		// The label makes the image's ID its own: an image whose ID is that
		// of kubeproof.local/testapp:v1 would be one image under two names on
		// the node, and containerd (2.4) was seen to lose the loaded name when
		// a Pod pulled the other.
		Config: v1.Config{Entrypoint: []string{"/kubeproof-testapp"}, Cmd: []string{"serve"}, Env: []string{"PATH=/"}, WorkingDir: "/", StopSignal: stopSignal,
			Labels: map[string]string{"io.kubeproof.served-by": "kubeproof-testapp registry"}}})
	if err != nil {
		return err
	}
	if img, err = mutate.AppendLayers(img, layer); err != nil {
		return err
	}
	cfg, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	cfgDigest, err := img.ConfigName()
	if err != nil {
		return err
	}
	g.blobs[cfgDigest.String()] = cfg
	compressed, err := layer.Compressed()
	if err != nil {
		return err
	}
	data, err := io.ReadAll(compressed)
	if err != nil {
		return err
	}
	layerDigest, err := layer.Digest()
	if err != nil {
		return err
	}
	g.blobs[layerDigest.String()] = data
	raw, err := img.RawManifest()
	if err != nil {
		return err
	}
	mt, err := img.MediaType()
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	m := manifest{data: raw, mediaType: string(mt), digest: digest.String()}
	g.manifests[name+":"+tag] = m
	g.manifests[name+":"+digest.String()] = m
	return nil
}

var registryPath = regexp.MustCompile(`^/v2/([a-z0-9._/-]+)/(manifests|blobs)/([A-Za-z0-9._:-]+)$`)

func (g *registry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
	if g.user != "" {
		u, p, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(g.user)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(g.password)) != 1 {
			fmt.Fprintf(os.Stderr, "%s: registry: %s %s: 401 (credentials given: %t)\n", AppName, r.Method, r.URL.Path, ok)
			w.Header().Set("WWW-Authenticate", `Basic realm="kubeproof-testapp"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, `{"errors":[{"code":"UNSUPPORTED","message":"read-only"}]}`, http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Path == "/v2/" || r.URL.Path == "/v2" {
		w.WriteHeader(http.StatusOK)
		return
	}
	m := registryPath.FindStringSubmatch(r.URL.Path)
	if m == nil {
		http.NotFound(w, r)
		return
	}
	var body []byte
	if m[2] == "manifests" {
		mf, ok := g.manifests[m[1]+":"+m[3]]
		if !ok {
			http.Error(w, `{"errors":[{"code":"MANIFEST_UNKNOWN"}]}`, http.StatusNotFound)
			return
		}
		body = mf.data
		w.Header().Set("Content-Type", mf.mediaType)
		w.Header().Set("Docker-Content-Digest", mf.digest)
	} else {
		b, ok := g.blobs[m[3]]
		if !ok {
			http.Error(w, `{"errors":[{"code":"BLOB_UNKNOWN"}]}`, http.StatusNotFound)
			return
		}
		body = b
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Docker-Content-Digest", m[3])
	}
	fmt.Fprintf(os.Stderr, "%s: registry: %s %s: 200\n", AppName, r.Method, r.URL.Path)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
}
