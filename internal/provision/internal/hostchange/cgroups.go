package hostchange

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kubeproof/kubeproof/internal/provision/internal/process"
)

// CgroupMounts returns the mount points of every cgroup hierarchy (v1 and v2).
func CgroupMounts() ([]string, error) {
	ms, err := Mounts()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range ms {
		if m.FSType == "cgroup" || m.FSType == "cgroup2" {
			out = append(out, m.Point)
		}
	}
	return out, nil
}

// CgroupLayout names how a machine mounts its cgroups: "v1" (one
// hierarchy per controller), "v2" (the unified hierarchy alone, as on
// Ubuntu 24.04 and GitHub's runners) or "hybrid" (v1 controllers beside a
// v2 hierarchy without them, as systemd sets up); "" without any.
func CgroupLayout(ms []Mount) string {
	var v1, v2 bool
	for _, m := range ms {
		switch m.FSType {
		case "cgroup":
			v1 = true
		case "cgroup2":
			v2 = true
		}
	}
	switch {
	case v1 && v2:
		return "hybrid"
	case v1:
		return "v1"
	case v2:
		return "v2"
	}
	return ""
}

// MakeCgroup creates the cgroup name (a path below each hierarchy's root) in
// every hierarchy. A new cpuset group is empty and cannot hold tasks until
// it gets its parent's CPUs and memory nodes.
func MakeCgroup(name string) error {
	roots, err := CgroupMounts()
	if err != nil {
		return err
	}
	for _, root := range roots {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create cgroup %s: %w", dir, err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			parent, err := os.ReadFile(filepath.Join(root, f))
			if err != nil {
				continue // not the cpuset hierarchy
			}
			if err := os.WriteFile(filepath.Join(dir, f), parent, 0o644); err != nil {
				return fmt.Errorf("set %s of cgroup %s: %w", f, dir, err)
			}
		}
	}
	return nil
}

// cgroupDirs lists the cgroup tree name in every hierarchy, parents before
// their children (shortest path first).
func cgroupDirs(name string) ([]string, error) {
	roots, err := CgroupMounts()
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, root := range roots {
		_ = filepath.WalkDir(filepath.Join(root, name), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
	}
	sort.SliceStable(dirs, func(i, j int) bool { return len(dirs[i]) < len(dirs[j]) })
	return dirs, nil
}

// CgroupProcs lists the processes in the cgroup tree name of every hierarchy.
func CgroupProcs(name string) []int {
	dirs, _ := cgroupDirs(name)
	seen := map[int]bool{}
	var pids []int
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
				seen[pid] = true
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// ThawCgroup thaws every frozen cgroup in the tree name, parents first (a
// child of a frozen parent stays frozen). runc freezes a container's cgroup
// while it kills the container's processes and thaws it after; when runc is
// killed in between (a kind node removed while its kubelet stops a Pod),
// the cgroup stays frozen, and its processes can neither run nor die: no
// SIGKILL reaches them, and Docker cannot remove the node.
func ThawCgroup(name string) []error {
	dirs, err := cgroupDirs(name)
	if err != nil {
		return []error{err}
	}
	var errs []error
	for _, d := range dirs {
		// cgroup v1's freezer, and cgroup v2's cgroup.freeze.
		for file, thawed := range map[string]string{"freezer.state": "THAWED", "cgroup.freeze": "0"} {
			state, err := os.ReadFile(filepath.Join(d, file))
			if err != nil || strings.TrimSpace(string(state)) == thawed {
				continue
			}
			if err := os.WriteFile(filepath.Join(d, file), []byte(thawed), 0o644); err != nil {
				errs = append(errs, fmt.Errorf("thaw cgroup %s: %w", d, err))
			}
		}
	}
	return errs
}

// RemoveCgroup kills what is left in the cgroup tree name and removes it,
// deepest first, in every hierarchy. Frozen cgroups are thawed first, so
// that their processes can take the kill.
func RemoveCgroup(name string) []error {
	errs := ThawCgroup(name)
	for _, pid := range CgroupProcs(name) {
		if err := process.Kill(pid, 10*time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	dirs, err := cgroupDirs(name)
	if err != nil {
		return append(errs, err)
	}
	// Deepest first: a cgroup with children cannot be removed.
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Remove(dirs[i]); err != nil && !os.IsNotExist(err) {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", dirs[i], err))
		}
	}
	return errs
}
