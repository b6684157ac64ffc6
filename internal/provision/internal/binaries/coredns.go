package binaries

import (
	"context"
	"fmt"
	"path/filepath"
)

// CoreDNSModule is the Go module (and main package) of CoreDNS, the cluster
// DNS kubeadm installs.
const CoreDNSModule = "github.com/coredns/coredns"

// EnsureCoreDNS returns the path of the coredns program of version (as
// kubeadm names it, e.g. v1.14.2), building it into the cache if missing.
func EnsureCoreDNS(ctx context.Context, opts Options, version string) (string, error) {
	opts = opts.withDefaults()
	if err := validVersion(version); err != nil {
		return "", fmt.Errorf("coredns version: %w", err)
	}
	dir := filepath.Join(opts.CacheDir, "binaries", "coredns-"+version)
	bin := filepath.Join(dir, "coredns")
	if complete(dir) {
		return bin, nil
	}
	if _, err := newGoTool(opts, ""); err != nil {
		return "", err
	}
	err := ensureDir(ctx, opts, dir, func(ctx context.Context, opts Options, dir string) error {
		return buildModuleCommands(ctx, opts, "coredns", version, map[string]string{"coredns": CoreDNSModule}, dir, goBuild{})
	})
	if err != nil {
		return "", err
	}
	return bin, nil
}
