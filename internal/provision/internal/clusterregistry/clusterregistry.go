// Package clusterregistry is the registry kubeproof serves beside a
// cluster it makes, for as long as the cluster lives: `kubeproof registry
// serve` as a process of its own on this machine, at an address the nodes
// reach (the host end of the local node's link, the gateway of kind's
// network), at full speed and at the next port over a slow link the server
// makes. The images the specs run stay loaded into the nodes; the registry
// holds what the pull specs need: images no node has (kube/freshimage),
// made from the test app's image pushed here when the cluster comes up.
package clusterregistry

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision/internal/imagebuild"
)

// Name is the registry's component name (--without registry).
const Name = "registry"

// DefaultPort is the full-speed port; the slow link is the next one.
const DefaultPort = 5000

// DefaultRate is how fast the slow link sends: 512 KiB/s (about 4 Mbit/s),
// at which the test app's image (about 3 MB compressed) takes some 6 s to
// download, as long as the nginx:latest download seed 002 measured ("약 6초
// 소요").
const DefaultRate = 512 << 10

// repository is the path kubeproof's images take in the registry.
const repository = "kubeproof"

// Spec says where one cluster's registry listens and keeps its files.
type Spec struct {
	// Host is the address of this machine the nodes reach; Port the
	// full-speed port (Port+1 sends at most Rate bytes per second).
	Host string
	Port int
	Rate int64
	// Dir holds its blobs, AccessLog its log of requests: both in the
	// cluster's own directory, so that removing the cluster removes them.
	Dir, AccessLog string
	// Link says what lies between the nodes and Host (PullRegistry adds
	// how fast the registry sends).
	Link string
	// Args are more flags of `registry serve` (--component-arg registry=...).
	Args []string
}

// Addresses are host:port of the registry at full speed and of its slow
// link.
func (s Spec) Addresses() (full, shaped string) {
	return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)), net.JoinHostPort(s.Host, strconv.Itoa(s.Port+1))
}

// Command is the registry's command line: this kubeproof, serving.
func (s Spec) Command() ([]string, error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return nil, fmt.Errorf("locate kubeproof, which serves the cluster's registry: %w", err)
	}
	full, shaped := s.Addresses()
	return append([]string{exe, "registry", "serve",
		"--listen", full, "--shaped-listen", shaped, "--shaped-rate", strconv.FormatInt(s.Rate, 10),
		"--dir", s.Dir, "--access-log", s.AccessLog,
	}, s.Args...), nil
}

// IsCommand reports whether args are a registry's command line (to find
// it again after a killed run).
func IsCommand(args []string) bool {
	return len(args) > 2 && args[1] == "registry" && args[2] == "serve"
}

// Answers is the registry's health check: its API version endpoint
// answers as a distribution registry does (the header), so that another
// server on the port is not taken for it.
func (s Spec) Answers(ctx context.Context) (string, error) {
	full, _ := s.Addresses()
	url := "http://" + full + "/v2/"
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	if v := resp.Header.Get("Docker-Distribution-API-Version"); resp.StatusCode != http.StatusOK || v != "registry/2.0" {
		return "", fmt.Errorf("GET %s: HTTP %d, API version %q: not a registry", url, resp.StatusCode, v)
	}
	return "registry/2.0", nil
}

// Await polls Answers every 100 ms until it passes or timeout; the error
// says what was seen last.
func (s Spec) Await(ctx context.Context, timeout time.Duration) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, last = s.Answers(ctx)
		return last == nil, nil
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("the cluster's registry did not answer within %s; last seen: %v", timeout, last)
	}
	return err
}

// PushBase pushes the test app's image, from which the pull specs make
// images of their own.
func (s Spec) PushBase(ctx context.Context, programDir, cacheDir string) error {
	full, _ := s.Addresses()
	built, err := imagebuild.Load(images.TestApp, programDir, cacheDir)
	if err != nil {
		return err
	}
	if _, _, err := built.Push(ctx, full+"/"+repository, images.TestApp.LoadedTag(), true); err != nil {
		return exitcode.With(exitcode.ClusterSetup, fmt.Errorf("push the test app's image into the cluster's registry: %w", err))
	}
	return nil
}

// BaseImage is the name of the image PushBase pushes.
func BaseImage() string { return repository + "/testapp" }

// PullRegistry describes the registry for the specs. A rate its extra
// flags set (--rate: the full-speed address slowed too) is part of the
// link.
func (s Spec) PullRegistry() cluster.PullRegistry {
	full, shaped := s.Addresses()
	link := s.Link + ", the registry sending as fast as it can"
	if rate := flagValue(s.Args, "--rate"); rate != "" {
		link = s.Link + ", the registry sending at most " + rate + " bytes/s (--rate)"
	}
	return cluster.PullRegistry{
		Address: full, Link: link,
		Shaped: shaped, ShapedRate: s.Rate,
		ShapedLink: fmt.Sprintf("%s, the registry sending at most %d bytes/s", s.Link, s.Rate),
		AccessLog:  s.AccessLog,
		Base:       images.InRegistry(images.TestApp, full+"/"+repository, images.TestApp.LoadedTag()),
	}
}

// UserPort is the port a registry of the user's takes where the nodes
// reach this machine (host): that of --image-registry (imageRegistry)
// when it names this machine, at a loopback address (which the nodes reach
// at host, the same port) or at host itself (if not ""); 0 when it names no port here.
// The cluster's registry leaves that port to it: a user's registry started
// after `up` (it learns the node's address from `kubeproof env`) would
// otherwise find its port taken ("bind: address already in use").
func UserPort(imageRegistry, host string) int {
	hostPort, _, _ := strings.Cut(imageRegistry, "/")
	h, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		return 0
	}
	if ip := net.ParseIP(h); h != "localhost" && (host == "" || h != host) && (ip == nil || !ip.IsLoopback()) {
		return 0
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return 0
	}
	return p
}

// FirstPort is the first port from from on (in steps of two) that, with
// the next one, leaves out avoid (a user's registry, UserPort).
func FirstPort(from, avoid int) int {
	p := from
	for avoid == p || avoid == p+1 {
		p += 2
	}
	return p
}

// FreePort is the first port from from on (in steps of two) at which
// nothing listens on host, nor at the next port, and that leaves out avoid
// (UserPort): for clusters whose nodes share the address they reach this
// machine at (kind's network gateway).
func FreePort(host string, from, avoid int) (int, error) {
	for p := from; p < from+200; p += 2 {
		if p == FirstPort(p, avoid) && free(host, p) && free(host, p+1) {
			return p, nil
		}
	}
	return 0, exitcode.Errorf(exitcode.Conflict, "no two free ports from %d on %s for the cluster's registry", from, host)
}

func free(host string, port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}

// flagValue is the last value args give flag (--flag=v or --flag v).
func flagValue(args []string, flag string) string {
	v := ""
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			v = args[i+1]
		} else if rest, ok := strings.CutPrefix(a, flag+"="); ok {
			v = rest
		}
	}
	return v
}
