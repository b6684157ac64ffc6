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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubeproof/kubeproof/internal/exitcode"
)

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
