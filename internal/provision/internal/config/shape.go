package config

import (
	"os"
	"path/filepath"

	"github.com/kubeproof/kubeproof/internal/provision/internal/releases"
)

// DefaultName is the name of a cluster kubeproof makes when none is given.
const DefaultName = "kubeproof"

// DefaultCacheDir is where built binaries and images are kept:
// $KUBEPROOF_CACHE_DIR, else the user's cache directory.
func DefaultCacheDir() string {
	if d := os.Getenv("KUBEPROOF_CACHE_DIR"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "kubeproof")
	}
	return filepath.Join(os.TempDir(), "kubeproof-cache")
}

// Shape is what a provider that makes clusters is told, whichever it is:
// the cluster's name, the releases to run, where builds are cached, its
// networks, and flags and components to change or leave out.
type Shape struct {
	// Name names the cluster; clusters with different names do not collide.
	Name              string
	KubernetesVersion string
	EtcdVersion       string
	// CacheDir holds built binaries and images.
	CacheDir string
	// PodCIDR is the cluster's pod network.
	PodCIDR string
	// ServiceCIDR is the Service ClusterIP range.
	ServiceCIDR string
	// ComponentArgs are extra flags per component; they come last, so they
	// override the provider's own.
	ComponentArgs map[string][]string
	// Without are optional components left out.
	Without []string
	// ImageRegistry is a registry the nodes pull kubeproof's images from
	// (host[:port]); with InsecureRegistry their containerd speaks plain
	// HTTP to it.
	ImageRegistry    string
	InsecureRegistry bool
	// SkipImageLoad leaves the images the specs run (images.Workloads) out
	// of the nodes, as on a cluster kubeproof did not make: they must come
	// from ImageRegistry.
	SkipImageLoad bool
	// Ephemeral: the cluster lives only as long as the command that makes
	// it (`run` without --keep, trace, bench, faults). When that command is
	// killed before it can remove it, the next command that looks at the
	// cluster removes it first (see cluster.Abandoner).
	Ephemeral bool
}

// WithDefaults fills unset fields.
func (s Shape) WithDefaults() Shape {
	if s.Name == "" {
		s.Name = DefaultName
	}
	if s.KubernetesVersion == "" {
		s.KubernetesVersion = releases.DefaultKubernetesVersion
	}
	if s.EtcdVersion == "" {
		s.EtcdVersion = releases.EtcdVersionFor(s.KubernetesVersion)
	}
	if s.CacheDir == "" {
		s.CacheDir = DefaultCacheDir()
	}
	if s.PodCIDR == "" {
		s.PodCIDR = "10.244.0.0/16"
	}
	if s.ServiceCIDR == "" {
		s.ServiceCIDR = "10.96.0.0/16"
	}
	return s
}
