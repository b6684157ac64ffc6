package binaries

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kubeproof/kubeproof/internal/debpkg"
)

// The container runtime is built from Go modules like everything else: a
// kubelet of 1.37 or newer refuses a containerd that lacks the CRI
// RuntimeConfig call, which Debian's containerd 1.6 does, and one runtime
// release serves every Kubernetes release kubeproof runs.
const (
	DefaultContainerdVersion = "v2.4.2"
	DefaultRuncVersion       = "v1.5.2"
)

// ContainerdCommands maps containerd's programs to their Go packages: the
// daemon, the runc shim it starts per pod, and the client the providers load
// images with.
var ContainerdCommands = map[string]string{
	"containerd":              "github.com/containerd/containerd/v2/cmd/containerd",
	"containerd-shim-runc-v2": "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2",
	"ctr":                     "github.com/containerd/containerd/v2/cmd/ctr",
}

// RuncCommands is runc, the OCI runtime the shim calls.
var RuncCommands = map[string]string{"runc": "github.com/opencontainers/runc"}

// runcBuildPackages are what runc's cgo build links: libseccomp, statically,
// so that the same runc runs on the host and in a kind node.
var runcBuildPackages = []debpkg.Package{
	{Name: "gcc", File: "/usr/bin/gcc"},
	{Name: "libseccomp-dev", File: "/usr/include/seccomp.h"},
}

// containerd has snapshotters for file systems kubeproof never uses that
// need C libraries; the tags leave them out so it builds without cgo.
func containerdBuild(version string) goBuild {
	return goBuild{
		tags:    "no_btrfs,no_devmapper,no_zfs",
		ldflags: "-X github.com/containerd/containerd/v2/version.Version=" + version,
	}
}

// runc with seccomp (pods ask for RuntimeDefault profiles), linked
// statically (netgo and osusergo keep glibc's resolver and NSS out).
func runcBuild(version string) goBuild {
	return goBuild{
		tags:    "seccomp,netgo,osusergo",
		ldflags: "-X main.version=" + strings.TrimPrefix(version, "v") + " -extldflags -static",
		cgo:     true,
	}
}

func buildContainerd(ctx context.Context, opts Options, dir string) error {
	return buildModuleCommands(ctx, opts, "containerd", opts.ContainerdVersion, ContainerdCommands, dir, containerdBuild(opts.ContainerdVersion))
}

func buildRunc(ctx context.Context, opts Options, dir string) error {
	if err := debpkg.Ensure(ctx, runcBuildPackages, opts.Progress); err != nil {
		return fmt.Errorf("runc build needs: %w", err)
	}
	return buildModuleCommands(ctx, opts, "runc", opts.RuncVersion, RuncCommands, dir, runcBuild(opts.RuncVersion))
}

// runtimeDirs are the cache directories of the runtime's two releases.
func runtimeDirs(opts Options) (containerd, runc string) {
	root := filepath.Join(opts.CacheDir, "binaries")
	return filepath.Join(root, "containerd-"+opts.ContainerdVersion), filepath.Join(root, "runc-"+opts.RuncVersion)
}
