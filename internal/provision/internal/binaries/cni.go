package binaries

import (
	"context"
	"fmt"
	"path/filepath"
)

// CNIPluginsModule is the Go module of the reference CNI plugins.
const CNIPluginsModule = "github.com/containernetworking/plugins"

// DefaultCNIPluginsVersion is the release kind v0.33's own node image
// carries.
const DefaultCNIPluginsVersion = "v1.9.1"

// CNIPlugins are the plugins kubeproof's pod network runs (a bridge with
// host-local addresses, port mappings) and the loopback plugin containerd
// runs unless it sets up each sandbox's lo itself, by their packages.
var CNIPlugins = map[string]string{
	"bridge":     CNIPluginsModule + "/plugins/main/bridge",
	"host-local": CNIPluginsModule + "/plugins/ipam/host-local",
	"portmap":    CNIPluginsModule + "/plugins/meta/portmap",
	"loopback":   CNIPluginsModule + "/plugins/main/loopback",
}

// EnsureCNIPlugins returns the directory of the CNI plugins of version
// (static programs, so that they run in any node image), building it into
// the cache if missing: for a node image kubeproof did not build, which may
// lack some (kind's own has no bridge).
func EnsureCNIPlugins(ctx context.Context, opts Options, version string) (string, error) {
	opts = opts.withDefaults()
	if err := validVersion(version); err != nil {
		return "", fmt.Errorf("CNI plugins version: %w", err)
	}
	dir := filepath.Join(opts.CacheDir, "binaries", "cni-plugins-"+version)
	if complete(dir) {
		return dir, nil
	}
	if _, err := newGoTool(opts, ""); err != nil {
		return "", err
	}
	err := ensureDir(ctx, opts, dir, func(ctx context.Context, opts Options, dir string) error {
		return buildModuleCommands(ctx, opts, "cni-plugins", version, CNIPlugins, dir, goBuild{module: CNIPluginsModule})
	})
	if err != nil {
		return "", err
	}
	return dir, nil
}
