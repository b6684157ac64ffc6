package kind

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kubeproof/kubeproof/internal/provision/internal/dockerd"
	"github.com/kubeproof/kubeproof/internal/provision/internal/hostchange"
	"github.com/kubeproof/kubeproof/internal/provision/internal/process"
)

// Down deletes the cluster's containers (kind delete), stops extra API
// servers it started, removes its host-side files, restores the kernel
// settings its kubelets changed, and, if it was the last kind cluster in
// kubeproof's private Docker daemon, stops that daemon too (which undoes
// the daemon's own changes). Removing a cluster that is not there is not
// an error.
func (p *Provider) Down(ctx context.Context) error {
	c, l, pr := p.cfg, p.l, p.cfg.Progress
	st, stErr := loadState(l)
	host := st.DockerHost
	if stErr != nil {
		h, err := dockerd.Select(ctx)
		if err != nil {
			return err
		}
		host = h
	}
	// A private daemon that died (the machine restarted) still holds the
	// cluster's containers in its data root: start it to delete them, and
	// the end of Down stops it again.
	// With no state, only when no other Docker API answers.
	private := stErr != nil || st.PrivateDocker
	if private && (stErr == nil || host == "") && !dockerd.Running(ctx) && dockerd.Leftovers(c.CacheDir) > 0 {
		pr.Infof("the private Docker daemon is not running but holds containers: starting it to remove them")
		if err := dockerd.Start(ctx, c.CacheDir, pr); err != nil {
			return err
		}
		host = dockerd.Host()
	}
	var errs []error
	// Extra API servers run on this machine and name the cluster's files.
	for _, pid := range process.Find(func(args []string) bool {
		return slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, l.dir()+"/") })
	}) {
		if err := process.Terminate(pid, 15*time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	if host != "" && dockerd.Ping(ctx, host) == nil {
		kp, err := p.kind(host)
		if err != nil {
			return err
		}
		if names, _ := kp.List(); slices.Contains(names, c.Name) {
			done := pr.Step("deleting kind cluster %q", c.Name)
			// A node whose runc was killed while it froze a container (a
			// Pod being stopped as the node goes) cannot be removed until
			// that cgroup is thawed: Docker waits for processes that take
			// no signal. Below the private daemon's cgroup parent, which is
			// ours to touch, frozen cgroups are thawed as long as the
			// delete runs and, if it still fails, once more before a
			// second try.
			stopThawing := func() {}
			if private {
				stopThawing = keepThawing(dockerd.CgroupParent)
			}
			err := kp.Delete(c.Name, l.kubeconfig())
			stopThawing()
			if err != nil && private {
				if thawErrs := hostchange.ThawCgroup(dockerd.CgroupParent); len(thawErrs) == 0 {
					err = kp.Delete(c.Name, l.kubeconfig())
				}
			}
			done(err)
			if err != nil {
				errs = append(errs, fmt.Errorf("kind delete cluster %s: %w", c.Name, err))
			}
		}
	}
	if stErr == nil || dirExists(l.dir()) {
		if err := hostSysctls.Release(l.sysctlHolder()); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(l.dir()); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w", l.dir(), err))
	}
	if (stErr != nil || st.PrivateDocker) && dockerd.Running(ctx) && len(otherClusters(c.Name)) == 0 {
		if err := dockerd.Stop(ctx, pr); err != nil {
			errs = append(errs, err)
		}
		restoreDockerHost()
	}
	// Last: the daemon's state lives below filepath.Dir(Root) too.
	for _, d := range []string{Root, filepath.Dir(Root)} {
		if hostchange.DirEmpty(d) {
			_ = os.Remove(d)
		}
	}
	return errors.Join(errs...)
}

// keepThawing thaws the frozen cgroups below name now and every 100 ms
// until the returned function is called (a node's runc can freeze a
// container at any moment while the node is being removed).
func keepThawing(name string) (stop func()) {
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			_ = hostchange.ThawCgroup(name)
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(quit); <-finished }
}

// otherClusters lists kind clusters other than self that have state.
func otherClusters(self string) []string {
	entries, err := os.ReadDir(Root)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != self {
			if _, err := os.Stat(filepath.Join(Root, e.Name(), "state.json")); err == nil {
				out = append(out, e.Name())
			}
		}
	}
	return out
}

func dirExists(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}
