package imagebuild

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/internal/buildinfo"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision/internal/config"
)

// Module is kubeproof's module path.
const Module = "github.com/kubeproof/kubeproof"

// Program is one of the programs kubeproof packs into images or copies
// onto nodes, and the package it is built from.
type Program struct {
	Name    string
	Package string // relative to the module's root
}

// Programs are every program a program directory holds: what `make build`
// puts beside kubeproof, what a release archive carries, and what a
// kubeproof without them builds from its module source.
var Programs = []Program{
	{images.Pause.Program, "cmd/kubeproof-pause"},
	{images.TestApp.Program, "cmd/kubeproof-testapp"},
	{images.Webhook.Program, "cmd/kubeproof-webhook"},
	{"kubeproof-cni-trace", "cmd/kubeproof-cni-trace"},
	{images.CNI.Program, "internal/provision/cmd/kubeproof-cni"},
	{"kubeproof-runc", "internal/provision/cmd/kubeproof-runc"},
}

// ProgramDir is where the programs are for this machine's architecture:
// $KUBEPROOF_PROGRAM_DIR; else beside the running executable, when they
// are there (`make build`, a release archive); else built once from
// kubeproof's module source (what `go install` gives has none) into the
// cache directory.
func ProgramDir() (string, error) {
	return ProgramsFor(context.Background(), runtime.GOARCH)
}

// ProgramsFor is where the programs are for linux/arch: for this
// machine's architecture $KUBEPROOF_PROGRAM_DIR, else beside the running
// executable when they are there and it is that platform's; else built
// once from kubeproof's module source into the cache directory.
func ProgramsFor(ctx context.Context, arch string) (string, error) {
	if d := os.Getenv("KUBEPROOF_PROGRAM_DIR"); d != "" && arch == runtime.GOARCH {
		return d, nil
	}
	exe, err := executableDir()
	if err != nil {
		return "", err
	}
	if runtime.GOOS == "linux" && arch == runtime.GOARCH {
		if _, err := os.Stat(filepath.Join(exe, images.TestApp.Program)); err == nil {
			return exe, nil
		}
	}
	return buildPrograms(ctx, arch, exe)
}

func executableDir() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("locate kubeproof executable: %w", err)
	}
	exe, err = filepath.EvalSymlinks(exe)
	if err != nil {
		return "", fmt.Errorf("locate kubeproof executable: %w", err)
	}
	return filepath.Dir(exe), nil
}

// buildPrograms builds the programs for linux/arch from the source of the
// module version this binary was built from, into
// <cache>/programs/<version>/linux_<arch>; a module version never changes,
// so what is there is used as it is.
func buildPrograms(ctx context.Context, arch, exeDir string) (string, error) {
	version, err := moduleVersion()
	if err != nil {
		return "", exitcode.Errorf(exitcode.MissingTool,
			"the programs of kubeproof's images are not beside %s, and %v: `make build` puts them there, a release archive carries them, or set KUBEPROOF_PROGRAM_DIR", exeDir, err)
	}
	out := filepath.Join(config.DefaultCacheDir(), "programs", buildinfo.Tag(version), "linux_"+arch)
	if complete(out) {
		return out, nil
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", exitcode.Errorf(exitcode.MissingTool,
			"the programs of kubeproof's images are not beside %s, and building them from %s@%s needs Go (not in PATH): install Go, or a release archive, which carries them", exeDir, Module, version)
	}
	pr := progress.New(os.Stderr)
	done := pr.Step("building the programs of kubeproof's images for linux/%s from %s@%s (once; kept in %s)", arch, Module, version, out)
	err = buildFromSource(ctx, goTool, version, arch, out)
	done(err)
	if err != nil {
		return "", err
	}
	return out, nil
}

// moduleVersion is the module version this binary was built from, as Go
// recorded it: `go install` of a version records it; a build in a
// checkout records none (or one with local changes, "+dirty").
func moduleVersion() (string, error) {
	bi, ok := debug.ReadBuildInfo()
	switch {
	case !ok:
		return "", errors.New("this binary carries no build information")
	case bi.Main.Path != Module:
		return "", fmt.Errorf("this binary is not built from the module %s but %q", Module, bi.Main.Path)
	case bi.Main.Version == "" || bi.Main.Version == "(devel)" || strings.Contains(bi.Main.Version, "+"):
		return "", fmt.Errorf("this binary was built from a checkout (version %q), not from a module version to build them from", bi.Main.Version)
	}
	return bi.Main.Version, nil
}

// complete reports whether dir holds every program.
func complete(dir string) bool {
	for _, p := range Programs {
		if _, err := os.Stat(filepath.Join(dir, p.Name)); err != nil {
			return false
		}
	}
	return true
}

// buildFromSource downloads the module's source (to Go's module cache,
// where `go install` already put it) and builds the programs there, as the
// Makefile and the release build them (static, no paths or VCS data).
func buildFromSource(ctx context.Context, goTool, version, arch, out string) error {
	dl := exec.CommandContext(ctx, goTool, "mod", "download", "-json", Module+"@"+version)
	dl.Dir = os.TempDir() // no go.mod of the user's around
	dl.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	dl.Stderr = &stderr
	data, err := dl.Output()
	var mod struct{ Dir, Error string }
	if jerr := json.Unmarshal(data, &mod); jerr == nil && mod.Error != "" {
		return fmt.Errorf("download %s@%s: %s", Module, version, mod.Error)
	}
	if err != nil || mod.Dir == "" {
		return fmt.Errorf("download %s@%s: %v: %s", Module, version, err, strings.TrimSpace(stderr.String()))
	}
	// Built beside where it goes, then renamed: a build cut short leaves
	// no directory that looks complete.
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(out), err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), ".build-")
	if err != nil {
		return fmt.Errorf("create a build directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w", "-o", tmp + string(filepath.Separator)}
	for _, p := range Programs {
		args = append(args, "./"+p.Package)
	}
	build := exec.CommandContext(ctx, goTool, args...)
	build.Dir = mod.Dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch, "GOWORK=off", "GOFLAGS=-mod=readonly")
	stderr.Reset()
	build.Stderr = &stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build the programs for linux/%s in %s: %w: %s", arch, mod.Dir, err, strings.TrimSpace(stderr.String()))
	}
	_ = os.RemoveAll(out)
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("keep the programs in %s: %w", out, err)
	}
	return nil
}
