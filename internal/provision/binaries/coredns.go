package binaries

import (
	"context"
	"fmt"
	"os"
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
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("create binaries cache: %w", err)
	}
	unlock, err := lock(filepath.Join(opts.CacheDir, "binaries", ".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if complete(dir) {
		return bin, nil
	}
	if err := buildModuleCommands(ctx, opts, "coredns", version, map[string]string{"coredns": CoreDNSModule}, dir, goBuild{}); err != nil {
		return "", err
	}
	return bin, nil
}
