package local

import (
	"context"
	"fmt"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/provision/internal/binaries"
)

var _ cluster.ImageLoader = (*Provider)(nil)

// LoadImageArchive implements cluster.ImageLoader: the archive's image goes
// into the node's containerd, with the ctr of the release the cluster was
// made with.
func (p *Provider) LoadImageArchive(ctx context.Context, archive string) error {
	st, err := loadState(p.l.stateFile())
	if err != nil {
		return fmt.Errorf("local cluster %q is not up: %w", p.cfg.Name, err)
	}
	c := st.Config.WithDefaults()
	bin, err := binaries.Locate(binaries.Options{KubernetesVersion: c.KubernetesVersion, EtcdVersion: c.EtcdVersion, CacheDir: c.CacheDir})
	if err != nil {
		return err
	}
	return importImages(ctx, bin, p.l, map[string]string{archive: archive})
}
