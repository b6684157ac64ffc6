package dockerd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision/internal/hostchange"
	"github.com/kubeproof/kubeproof/internal/provision/internal/process"
)

// Stop removes every container and network of the private daemon, stops
// it, and undoes what it changed on the machine: processes, mounts,
// cgroups, bridges, our iptables chain and the host paths it created. The
// data root (images) stays as a cache. Stopping when nothing runs is not an
// error, and a daemon that crashed is cleaned up just the same.
func Stop(ctx context.Context, pr *progress.Printer) error {
	st, err := loadState()
	if errors.Is(err, os.ErrNotExist) && len(process.Find(ourProcess)) == 0 {
		return nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		pr.Infof("dockerd state unreadable (%v); cleaning up by name", err)
	}
	done := pr.Step("stopping the private Docker daemon")
	var errs []error
	add := func(es ...error) {
		for _, e := range es {
			if e != nil {
				errs = append(errs, e)
			}
		}
	}
	if Ping(ctx, Host()) == nil {
		// Containers first, with their anonymous volumes (a kind node's
		// /var): the daemon then has nothing to restore on its next start.
		add(removeAll(ctx))
	}
	if st != nil && st.Daemon.PID != 0 {
		add(st.Daemon.Stop(30 * time.Second))
	}
	for _, pid := range process.Find(ourProcess) {
		add(process.Kill(pid, 10*time.Second))
	}
	for _, pid := range process.Find(ourProxy) {
		add(process.Kill(pid, 10*time.Second))
	}
	add(hostchange.RemoveCgroup(CgroupParent)...)
	roots := []string{RunDir}
	if st != nil && st.DataRoot != "" {
		roots = append(roots, st.DataRoot)
	}
	add(hostchange.UnmountUnder(roots...)...)
	add(removeEgressGuard()...)
	add(removeLinks(st))
	add(os.RemoveAll(RunDir))
	add(os.RemoveAll(StateDir))
	if st != nil {
		add(removeCreatedPaths(st.Existed)...)
	}
	err = errors.Join(errs...)
	done(err)
	return err
}

// removeAll deletes every container (with its volumes) and every network
// of ours.
func removeAll(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, "docker", "ps", "-aq")
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+Host())
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("list containers: %w", err)
	}
	if ids := strings.Fields(string(out)); len(ids) > 0 {
		if err := docker(ctx, append([]string{"rm", "-f", "-v"}, ids...)...); err != nil {
			return err
		}
	}
	if err := docker(ctx, "network", "prune", "-f"); err != nil {
		return err
	}
	return docker(ctx, "volume", "prune", "-f")
}

// ourProxy matches a docker-proxy that forwards to our network (left over
// if the daemon died).
func ourProxy(args []string) bool {
	if len(args) == 0 || !strings.HasSuffix(args[0], "docker-proxy") {
		return false
	}
	i := slices.Index(args, "-container-ip")
	if i < 0 || i+1 >= len(args) {
		return false
	}
	bridge, err := net.InterfaceByName(Bridge)
	if err != nil {
		return false
	}
	addrs, _ := bridge.Addrs()
	ip := net.ParseIP(args[i+1])
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.Contains(ip) {
			return true
		}
	}
	return false
}

// removeLinks deletes our bridge and any bridge the daemon made that was
// not there before it started.
func removeLinks(st *state) error {
	var errs []error
	for _, name := range links() {
		created := st != nil && !slices.Contains(st.Links, name) && (strings.HasPrefix(name, "br-") || strings.HasPrefix(name, "veth"))
		if name != Bridge && !created {
			continue
		}
		if out, err := exec.Command("ip", "link", "delete", name).CombinedOutput(); err != nil {
			if _, gone := net.InterfaceByName(name); gone != nil {
				continue // went with its peer
			}
			errs = append(errs, fmt.Errorf("delete link %s: %w: %s", name, err, strings.TrimSpace(string(out))))
		}
	}
	return errors.Join(errs...)
}

// removeCreatedPaths removes the shared host paths that did not exist
// before Start, if nothing else put anything in them.
func removeCreatedPaths(existed map[string]bool) []error {
	var errs []error
	for _, p := range sharedPaths {
		if existed[p] {
			continue
		}
		info, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if info.IsDir() && !hostchange.DirEmpty(p) {
			continue
		}
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			errs = append(errs, fmt.Errorf("remove %s: %w", p, err))
		}
	}
	return errs
}
