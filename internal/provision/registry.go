package provision

import (
	"context"

	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision/internal/ociregistry"
)

// RegistryOptions say where a registry kubeproof serves listens and keeps
// its blobs.
type RegistryOptions = ociregistry.Options

// ServeRegistry serves an OCI registry on this machine until ctx ends
// (`kubeproof registry serve`): for clusters here that pull kubeproof's
// images, and for air-gapped ones to mirror from.
func ServeRegistry(ctx context.Context, o RegistryOptions, pr *progress.Printer) error {
	return ociregistry.Serve(ctx, o, pr)
}

// ParseRate reads a rate in bytes per second ("512k", "4M").
func ParseRate(s string) (int64, error) { return ociregistry.ParseRate(s) }
