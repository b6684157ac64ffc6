// Package binaries builds the Kubernetes and etcd programs a local cluster
// runs, from their published Go modules, into a versioned cache, and reuses
// the cache when it is complete.
//
// No release tarball or image is downloaded: the only network source is the
// Go module proxy configured for the go command.
package binaries

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

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

// goTool runs the go command for one build. It fails with a MissingTool code
// when there is no go command, because that is the usual cause on a fresh
// machine.
type goTool struct {
	path string
	dir  string
	env  []string
	// planned are the packages the builds so far need, if set: a set, as
	// one module's programs share most of theirs.
	planned *packageSet
}

func newGoTool(opts Options, dir string) (*goTool, error) {
	path, err := exec.LookPath(opts.Go)
	if err != nil {
		return nil, exitcode.Errorf(exitcode.MissingTool,
			"no Go toolchain (%q not found in PATH): kubeproof builds Kubernetes %s from its Go modules; install Go 1.26 or newer",
			opts.Go, opts.KubernetesVersion)
	}
	env := append(os.Environ(),
		"GOWORK=off",
		"GOFLAGS=-mod=mod",
		"CGO_ENABLED=0",
	)
	return &goTool{path: path, dir: dir, env: env}, nil
}

// build compiles pkgs (stripped, -trimpath, the flags of how) to output.
// It first counts the packages outside the standard library the build
// needs, for the progress line's estimate of what is left.
func (g *goTool) build(ctx context.Context, onLine func(string), how goBuild, output string, pkgs ...string) error {
	if g.planned != nil {
		list := []string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}
		if how.tags != "" {
			list = append(list, "-tags", how.tags)
		}
		_ = g.run(ctx, g.planned.add, append(list, pkgs...)...)
	}
	args := []string{"build", "-v", "-trimpath", "-ldflags", strings.TrimSpace("-s -w " + how.ldflags)}
	if how.tags != "" {
		args = append(args, "-tags", how.tags)
	}
	args = append(args, "-o", output)
	return g.run(ctx, onLine, append(args, pkgs...)...)
}

// run runs `go args...`; onLine, if set, sees every output line.
func (g *goTool) run(ctx context.Context, onLine func(string), args ...string) error {
	cmd := exec.CommandContext(ctx, g.path, args...)
	cmd.Dir = g.dir
	cmd.Env = g.env
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	cmd.Stderr = pw
	var tail tailBuffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			line := sc.Text()
			tail.add(line)
			if onLine != nil {
				onLine(line)
			}
		}
	}()
	err := cmd.Run()
	pw.Close()
	<-done
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, tail.String())
	}
	return nil
}

// tailBuffer keeps the last lines of a command's output for error messages.
type tailBuffer struct{ lines []string }

func (t *tailBuffer) add(l string) {
	t.lines = append(t.lines, l)
	if len(t.lines) > 30 {
		t.lines = t.lines[len(t.lines)-30:]
	}
}
func (t *tailBuffer) String() string { return strings.Join(t.lines, "\n") }

// buildInto builds packages into dir through a temporary sibling directory
// and renames it into place, so an interrupted build never looks complete.
func buildInto(ctx context.Context, opts Options, what string, wrapperDir, dir string, build func(g *goTool, out string, onLine func(string)) error) error {
	g, err := newGoTool(opts, wrapperDir)
	if err != nil {
		return err
	}
	tmp := dir + ".partial"
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("clean %s: %w", tmp, err)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	var compiled atomic.Int64
	g.planned = &packageSet{seen: map[string]bool{}}
	onLine := func(string) { compiled.Add(1) }
	done := opts.Progress.Step("building %s from Go modules (cold: minutes; cached afterwards in %s)", what, dir)
	begin := time.Now()
	stop := opts.Progress.Ticker(30*time.Second, "building "+what, func() string {
		return buildProgress(compiled.Load(), g.planned.len(), time.Since(begin))
	})
	err = build(g, tmp, onLine)
	stop()
	done(err)
	if err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("build %s: %w", what, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, completeMarker), []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		return fmt.Errorf("mark %s complete: %w", what, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("replace %s: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("move %s into place: %w", what, err)
	}
	return nil
}

// moduleInfo is what `go mod download -json` reports about one module.
type moduleInfo struct {
	Path    string
	Version string
	Info    string
	GoMod   string
	Error   string
}

func downloadModule(ctx context.Context, g *goTool, module string) (moduleInfo, error) {
	cmd := exec.CommandContext(ctx, g.path, "mod", "download", "-json", module)
	cmd.Dir = g.dir
	cmd.Env = g.env
	out, err := cmd.Output()
	var info moduleInfo
	if jerr := json.Unmarshal(out, &info); jerr == nil && info.Error != "" {
		return info, fmt.Errorf("download %s: %s", module, info.Error)
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return info, fmt.Errorf("download %s: %w: %s", module, err, strings.TrimSpace(string(ee.Stderr)))
		}
		return info, fmt.Errorf("download %s: %w", module, err)
	}
	if err := json.Unmarshal(out, &info); err != nil {
		return info, fmt.Errorf("download %s: parse go output: %w", module, err)
	}
	return info, nil
}

// wrapperDir is the generated module that builds one release.
func wrapperDir(opts Options, name string) (string, error) {
	dir := filepath.Join(opts.CacheDir, "build", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create build module %s: %w", dir, err)
	}
	return dir, nil
}

// buildProgress says how many packages were compiled and, once a tenth of
// those planned are, about how long the rest takes at the same pace (std
// packages and ones already in the build cache are not planned, so this
// errs long).
func buildProgress(compiled, planned int64, elapsed time.Duration) string {
	if planned <= 0 || compiled < planned/10 {
		return fmt.Sprintf("%d packages compiled", compiled)
	}
	if compiled >= planned {
		return fmt.Sprintf("%d packages compiled, linking", compiled)
	}
	left := time.Duration(float64(elapsed) * float64(planned-compiled) / float64(compiled)).Round(time.Minute)
	if left < time.Minute {
		return fmt.Sprintf("%d of about %d packages compiled, under a minute left", compiled, planned)
	}
	return fmt.Sprintf("%d of about %d packages compiled, about %s left", compiled, planned, strings.TrimSuffix(left.String(), "0s"))
}

// packageSet counts distinct import paths; the progress ticker reads it
// while a build adds to it.
type packageSet struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (p *packageSet) add(path string) {
	if path == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen[path] = true
}

func (p *packageSet) len() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return int64(len(p.seen))
}
