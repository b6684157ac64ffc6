package hostchange

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// The cgroup drivers a kubelet and runc (through containerd) can use: they
// must agree.
const (
	DriverCgroupfs = "cgroupfs"
	DriverSystemd  = "systemd"
)

// kubeletControllers are the cgroup v2 controllers a kubelet manages (its
// cgroup manager asks for those of them the root offers), and io, which
// runc sets for a container's block IO weight.
var kubeletControllers = []string{"cpu", "cpuset", "hugetlb", "io", "memory", "pids"}

// requiredControllers are those without which a node cannot enforce a
// Pod's limits: CPU quota, memory limit, process count.
var requiredControllers = []string{"cpu", "memory", "pids"}

// CgroupHost is what a machine offers for a node's cgroups.
type CgroupHost struct {
	// Layout is CgroupLayout's: v1, v2 or hybrid.
	Layout string
	// UnifiedRoot is where the v2 hierarchy is mounted, "" without one.
	UnifiedRoot string
	// Controllers are the controllers the v2 root offers (its
	// cgroup.controllers); on a hybrid machine, usually none.
	Controllers []string
	// Systemd says systemd runs as PID 1 and manages the cgroups (it made
	// /run/systemd/system, as sd_booted(3) checks).
	Systemd bool
}

// ReadCgroupHost reads this machine's cgroup mounts, the v2 root's
// controllers and whether systemd booted it.
func ReadCgroupHost() (CgroupHost, error) {
	ms, err := Mounts()
	if err != nil {
		return CgroupHost{}, fmt.Errorf("read the cgroup mounts: %w", err)
	}
	h := CgroupHost{Layout: CgroupLayout(ms)}
	for _, m := range ms {
		if m.FSType == "cgroup2" {
			h.UnifiedRoot = m.Point
		}
	}
	if h.UnifiedRoot != "" {
		data, err := os.ReadFile(filepath.Join(h.UnifiedRoot, "cgroup.controllers"))
		if err != nil {
			return h, fmt.Errorf("read the cgroup v2 controllers: %w", err)
		}
		h.Controllers = strings.Fields(string(data))
	}
	comm, _ := os.ReadFile("/proc/1/comm")
	if fi, err := os.Stat("/run/systemd/system"); err == nil && fi.IsDir() && strings.TrimSpace(string(comm)) == "systemd" {
		h.Systemd = true
	}
	return h, nil
}

// NodeCgroup is how a local node's cgroups are made on a host: the driver
// the kubelet and runc use, the kubelet's cgroupRoot, and on a cgroup v2
// host the controllers the node's subtree gets.
type NodeCgroup struct {
	// Name is the node's cgroup below each hierarchy's root (cgroupfs
	// driver), e.g. kubeproof-x.
	Name string `json:"name"`
	// Driver is DriverCgroupfs or DriverSystemd.
	Driver string `json:"driver"`
	// KubeletRoot is the kubelet's cgroupRoot. The kubelet reads it in
	// cgroupfs form with either driver; with systemd's it is the slice
	// Slice (the kubelet's escaping of "-" is "_").
	KubeletRoot string `json:"kubeletRoot"`
	// Slice is, with the systemd driver, the slice unit that is the node's
	// cgroup.
	Slice string `json:"slice,omitempty"`
	// Unified says the host has the unified (v2) hierarchy only.
	Unified bool `json:"unified"`
	// UnifiedRoot is where that hierarchy is mounted.
	UnifiedRoot string `json:"unifiedRoot,omitempty"`
	// Controllers are, on cgroup v2, the controllers enabled for the node's
	// subtree: those of kubeletControllers the host offers.
	Controllers []string `json:"controllers,omitempty"`
	// Lacks are, on cgroup v2, controllers a kubelet would use that the
	// host does not offer (cpuset, hugetlb on some): the kubelet does
	// without them, so they are said, not required.
	Lacks []string `json:"lacks,omitempty"`
}

// PlanNodeCgroup decides the node cgroup name for host h. cgroup v1 and
// hybrid hosts keep the cgroupfs driver with the cgroup made in every
// hierarchy (systemd's v1 controllers are not delegated to anyone). A v2
// host gets the systemd driver when systemd manages its cgroups (two
// managers of one tree would undo each other's work), cgroupfs otherwise,
// and needs the cpu, memory and pids controllers.
func PlanNodeCgroup(h CgroupHost, name string) (NodeCgroup, error) {
	n := NodeCgroup{Name: name, Driver: DriverCgroupfs, KubeletRoot: "/" + name}
	if h.Layout != "v2" {
		return n, nil
	}
	n.Unified, n.UnifiedRoot = true, h.UnifiedRoot
	for _, c := range kubeletControllers {
		if slices.Contains(h.Controllers, c) {
			n.Controllers = append(n.Controllers, c)
		} else {
			n.Lacks = append(n.Lacks, c)
		}
	}
	var missing []string
	for _, c := range requiredControllers {
		if !slices.Contains(h.Controllers, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return n, fmt.Errorf("the cgroup v2 root %s offers the controllers [%s], and a node needs %s too (to keep Pods' CPU, memory and process limits)",
			h.UnifiedRoot, strings.Join(h.Controllers, " "), strings.Join(missing, ", "))
	}
	if h.Systemd {
		n.Driver = DriverSystemd
		n.Slice = strings.ReplaceAll(name, "-", "_") + ".slice"
	}
	return n, nil
}

// Dir is the node cgroup's directory in the unified hierarchy (cgroup v2).
func (n NodeCgroup) Dir() string {
	if n.Slice != "" {
		return filepath.Join(n.UnifiedRoot, n.Slice)
	}
	return filepath.Join(n.UnifiedRoot, n.Name)
}

// Describe says in one line what the node's cgroups are.
func (n NodeCgroup) Describe() string {
	if !n.Unified {
		return fmt.Sprintf("cgroup v1: %s in every hierarchy, %s driver", n.Name, n.Driver)
	}
	s := fmt.Sprintf("cgroup v2: %s with controllers %s, %s driver", n.Dir(), strings.Join(n.Controllers, " "), n.Driver)
	if len(n.Lacks) > 0 {
		s += fmt.Sprintf(" (the host offers no %s: the kubelet does without)", strings.Join(n.Lacks, ", "))
	}
	return s
}

// systemdUnitDir holds runtime unit files: they go with the next boot even
// when nothing removes them.
const systemdUnitDir = "/run/systemd/system"

// Make creates the node's cgroup. On cgroup v2 its controllers are first
// enabled in the root's cgroup.subtree_control, for holder, with what was
// enabled before kept in the file saved (see SubtreeControl; the root may
// do so, having no processes of its own), then in the node's own, for the
// kubelet's children. With the systemd driver the node's cgroup is a slice
// unit that systemd makes; it turns the controllers on for what it holds.
func (n NodeCgroup) Make(ctx context.Context, saved, holder string) error {
	if !n.Unified {
		return MakeCgroup(n.Name)
	}
	if err := n.parent(saved).Hold(holder, n.Controllers); err != nil {
		return err
	}
	if n.Driver == DriverSystemd {
		unit := fmt.Sprintf("[Unit]\nDescription=kubeproof: the cgroup of local node %s\n\n[Slice]\nCPUAccounting=yes\nMemoryAccounting=yes\nTasksAccounting=yes\nIOAccounting=yes\n", n.Name)
		if err := os.WriteFile(filepath.Join(systemdUnitDir, n.Slice), []byte(unit), 0o644); err != nil {
			return fmt.Errorf("write the slice unit %s: %w", n.Slice, err)
		}
		if err := systemctl(ctx, "daemon-reload"); err != nil {
			return err
		}
		return systemctl(ctx, "start", n.Slice)
	}
	dir := n.Dir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create cgroup %s: %w", dir, err)
	}
	return writeSubtreeControl(dir, "+", n.Controllers)
}

// parent is the cgroup v2 root's subtree control, saved in file saved.
func (n NodeCgroup) parent(saved string) SubtreeControl {
	return SubtreeControl{File: saved, Dir: n.UnifiedRoot}
}

// Remove kills what runs in the node's cgroup and removes it: with the
// systemd driver by stopping its slice (which stops every unit in it) and
// removing the unit; then whatever is left in the cgroupfs directories, in
// every hierarchy. On cgroup v2, holder then lets go of the root's
// controllers (Make). It works from the name alone, after a crash too.
func (n NodeCgroup) Remove(ctx context.Context, saved, holder string) []error {
	var errs []error
	if n.Slice != "" {
		unit := filepath.Join(systemdUnitDir, n.Slice)
		if _, err := os.Stat(unit); err == nil {
			if err := systemctl(ctx, "stop", n.Slice); err != nil {
				errs = append(errs, err)
			}
			if err := os.Remove(unit); err != nil {
				errs = append(errs, fmt.Errorf("remove the slice unit: %w", err))
			}
			if err := systemctl(ctx, "daemon-reload"); err != nil {
				errs = append(errs, err)
			}
		}
		errs = append(errs, RemoveCgroup(n.Slice)...)
	}
	errs = append(errs, RemoveCgroup(n.Name)...)
	if n.Unified {
		if err := n.parent(saved).Release(holder); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Procs lists the processes in the node's cgroups.
func (n NodeCgroup) Procs() []int {
	pids := CgroupProcs(n.Name)
	if n.Slice != "" {
		pids = append(pids, CgroupProcs(n.Slice)...)
	}
	return pids
}

func systemctl(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "systemctl", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("systemctl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// writeSubtreeControl enables (sign "+") or disables ("-") controllers in
// dir's cgroup.subtree_control, one at a time so that one the kernel
// refuses is named.
func writeSubtreeControl(dir, sign string, controllers []string) error {
	var errs []error
	for _, c := range controllers {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(sign+c), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("write %s%s to %s/cgroup.subtree_control: %w", sign, c, dir, err))
		}
	}
	return errors.Join(errs...)
}

// SubtreeControl enables cgroup v2 controllers in Dir's
// cgroup.subtree_control while any holder exists; the last holder to
// leave disables those that were not enabled before the first came. runc
// enables every controller the root offers on its way down when it makes a
// container's cgroup, so what was enabled before is what the machine had.
type SubtreeControl struct {
	// File keeps the controllers enabled before, and the holders.
	File string
	// Dir is the cgroup, usually the v2 root.
	Dir string
}

type savedSubtree struct {
	Before []string `json:"before"`
	holders
}

// Hold notes the enabled controllers if nobody holds them yet, enables
// controllers, and adds holder.
func (s SubtreeControl) Hold(holder string, controllers []string) error {
	return hold(s.File, "cgroup controllers", holder, func(saved *savedSubtree) error {
		before, err := os.ReadFile(filepath.Join(s.Dir, "cgroup.subtree_control"))
		if err != nil {
			return fmt.Errorf("read %s/cgroup.subtree_control: %w", s.Dir, err)
		}
		saved.Before = strings.Fields(string(before))
		return nil
	}, func(*savedSubtree) error {
		return writeSubtreeControl(s.Dir, "+", controllers)
	})
}

// Release removes holder; if it was the last, the controllers enabled
// since the first holder came are disabled again. One still in use below
// (someone else's cgroup enabled it further down) stays, and is named.
func (s SubtreeControl) Release(holder string) error {
	saved, last, err := release[savedSubtree](s.File, "cgroup controllers", holder)
	if err != nil || !last {
		return err
	}
	return writeSubtreeControl(s.Dir, "-", s.added(saved.Before))
}

// added lists the controllers enabled in Dir now that are not in before.
func (s SubtreeControl) added(before []string) []string {
	now, err := os.ReadFile(filepath.Join(s.Dir, "cgroup.subtree_control"))
	if err != nil {
		return nil
	}
	var out []string
	for _, c := range strings.Fields(string(now)) {
		if !slices.Contains(before, c) {
			out = append(out, c)
		}
	}
	return out
}
