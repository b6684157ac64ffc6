// Package binaries builds the Kubernetes and etcd programs a local cluster
// runs, from their published Go modules, into a versioned cache, and reuses
// the cache when it is complete.
//
// No release tarball or image is downloaded: the only network source is the
// Go module proxy configured for the go command.
package binaries

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"syscall"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision/internal/config"
	"github.com/kubeproof/kubeproof/internal/provision/internal/releases"
)

// KubernetesCommands are the programs built from k8s.io/kubernetes/cmd.
var KubernetesCommands = []string{
	"kube-apiserver", "kube-controller-manager", "kube-scheduler",
	"kubelet", "kube-proxy", "kubectl", "kubeadm",
}

// EtcdCommands maps the program name to its Go package.
var EtcdCommands = map[string]string{
	"etcd":    "go.etcd.io/etcd/server/v3",
	"etcdctl": "go.etcd.io/etcd/etcdctl/v3",
}

// Options say which versions to build and where to cache them.
type Options struct {
	KubernetesVersion string
	EtcdVersion       string
	// ContainerdVersion and RuncVersion are the container runtime's
	// releases; empty means the defaults above.
	ContainerdVersion string
	RuncVersion       string
	// CacheDir is kubeproof's cache root; binaries live in CacheDir/binaries.
	CacheDir string
	// Go is the go command to build with; empty means "go" from PATH.
	Go       string
	Progress *progress.Printer
}

// Set locates the cached programs of one Kubernetes, etcd, containerd and
// runc version.
type Set struct {
	KubernetesDir string
	EtcdDir       string
	ContainerdDir string
	RuncDir       string
}

// Path returns the path of a program of the set (a Kubernetes, etcd,
// containerd or runc command).
func (s Set) Path(name string) string {
	if _, ok := EtcdCommands[name]; ok {
		return filepath.Join(s.EtcdDir, name)
	}
	if _, ok := ContainerdCommands[name]; ok {
		return filepath.Join(s.ContainerdDir, name)
	}
	if _, ok := RuncCommands[name]; ok {
		return filepath.Join(s.RuncDir, name)
	}
	return filepath.Join(s.KubernetesDir, name)
}

// dirs are the set's cache directories, each built by one function.
func (s Set) dirs() []string {
	return []string{s.KubernetesDir, s.EtcdDir, s.ContainerdDir, s.RuncDir}
}

// Locate returns the set for opts without building anything; it fails when
// the cache is incomplete.
func Locate(opts Options) (Set, error) {
	opts = opts.withDefaults()
	set := Set{
		KubernetesDir: filepath.Join(opts.CacheDir, "binaries", "kubernetes-"+opts.KubernetesVersion),
		EtcdDir:       filepath.Join(opts.CacheDir, "binaries", "etcd-"+opts.EtcdVersion),
	}
	set.ContainerdDir, set.RuncDir = runtimeDirs(opts)
	for _, dir := range set.dirs() {
		if !complete(dir) {
			return set, fmt.Errorf("binaries for Kubernetes %s, etcd %s, containerd %s and runc %s are not built yet in %s (run `kubeproof prepare`)",
				opts.KubernetesVersion, opts.EtcdVersion, opts.ContainerdVersion, opts.RuncVersion, filepath.Join(opts.CacheDir, "binaries"))
		}
	}
	return set, nil
}

// Ensure returns the cached set, building whatever is missing first.
func Ensure(ctx context.Context, opts Options) (Set, error) {
	opts = opts.withDefaults()
	if err := validVersion(opts.KubernetesVersion); err != nil {
		return Set{}, exitcode.With(exitcode.Usage, fmt.Errorf("kubernetes version: %w", err))
	}
	if err := validVersion(opts.EtcdVersion); err != nil {
		return Set{}, exitcode.With(exitcode.Usage, fmt.Errorf("etcd version: %w", err))
	}
	if err := validVersion(opts.ContainerdVersion); err != nil {
		return Set{}, exitcode.With(exitcode.Usage, fmt.Errorf("containerd version: %w", err))
	}
	if err := validVersion(opts.RuncVersion); err != nil {
		return Set{}, exitcode.With(exitcode.Usage, fmt.Errorf("runc version: %w", err))
	}
	set, err := Locate(opts)
	if err == nil {
		return set, nil
	}
	// Something must be built: check for Go before touching the cache.
	if _, err := newGoTool(opts, ""); err != nil {
		return Set{}, err
	}
	builders := []func(context.Context, Options, string) error{buildKubernetes, buildEtcd, buildContainerd, buildRunc}
	for i, dir := range set.dirs() {
		if err := ensureDir(ctx, opts, dir, builders[i]); err != nil {
			return Set{}, err
		}
	}
	return set, nil
}

// ensureDir builds one cache directory unless it is complete. Each has a
// lock of its own: two kubeproof processes never build the same release at
// once (the second waits, then finds it built), while different releases
// build side by side.
func ensureDir(ctx context.Context, opts Options, dir string, build func(context.Context, Options, string) error) error {
	if complete(dir) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("create binaries cache: %w", err)
	}
	locks := filepath.Join(filepath.Dir(dir), ".locks")
	if err := os.MkdirAll(locks, 0o755); err != nil {
		return fmt.Errorf("create binaries cache: %w", err)
	}
	lockFile := filepath.Join(locks, filepath.Base(dir))
	unlock, err := lock(lockFile)
	if err != nil {
		return err
	}
	defer unlock()
	if complete(dir) {
		return nil
	}
	err = build(ctx, opts, dir)
	if exitcode.Of(err) == exitcode.Usage {
		// Nothing of that version exists or will: leave no lock for it.
		os.Remove(lockFile)
	}
	return err
}

func (o Options) withDefaults() Options {
	if o.KubernetesVersion == "" {
		o.KubernetesVersion = releases.DefaultKubernetesVersion
	}
	if o.EtcdVersion == "" {
		o.EtcdVersion = releases.EtcdVersionFor(o.KubernetesVersion)
	}
	if o.ContainerdVersion == "" {
		o.ContainerdVersion = DefaultContainerdVersion
	}
	if o.RuncVersion == "" {
		o.RuncVersion = DefaultRuncVersion
	}
	if o.CacheDir == "" {
		o.CacheDir = config.DefaultCacheDir()
	}
	if o.Go == "" {
		o.Go = "go"
	}
	if o.Progress == nil {
		o.Progress = progress.Discard()
	}
	return o
}

// DefaultCacheDir is $KUBEPROOF_CACHE_DIR, else kubeproof under the user's
// cache directory (~/.cache/kubeproof).
var versionRE = regexp.MustCompile(`^v\d+\.\d+\.\d+$`)

func validVersion(v string) error {
	if !versionRE.MatchString(v) {
		return fmt.Errorf("%q is not a release version like v1.36.3", v)
	}
	return nil
}

const completeMarker = ".kubeproof-complete"

func complete(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, completeMarker))
	return err == nil
}

// lock takes an exclusive file lock so that two kubeproof processes never
// build into the same cache at once; the second waits for the first.
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open build lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("take build lock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
