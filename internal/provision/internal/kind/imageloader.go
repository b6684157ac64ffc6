package kind

import (
	"context"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/exitcode"
)

var _ cluster.ImageLoader = (*Provider)(nil)

// LoadImageArchive implements cluster.ImageLoader: the archive's image goes
// into every node, as kubeproof's images do at bring-up.
func (p *Provider) LoadImageArchive(_ context.Context, archive string) error {
	st, err := loadState(p.l)
	if err != nil {
		return exitcode.Errorf(exitcode.Unreachable, "kind cluster %q is not up: %v", p.cfg.Name, err)
	}
	kp, err := p.kind(st.DockerHost)
	if err != nil {
		return err
	}
	ns, err := kp.ListNodes(p.cfg.Name)
	if err != nil || len(ns) == 0 {
		return exitcode.Errorf(exitcode.Unreachable, "kind cluster %q has no nodes in Docker at %s (%v)", p.cfg.Name, st.DockerHost, err)
	}
	return loadImages(ns, []string{archive}, p.cfg.Progress)
}
