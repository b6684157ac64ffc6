package local

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kubeproof/kubeproof/framework/process"
)

// sharedHostPaths are host paths outside the cluster's own directories that
// its components create when missing: containerd's shim sockets, libcni's
// result cache, the kubelet's container log links and its device plugin
// socket (a fixed path in every kubelet), iproute2's namespace directory, and
// our own roots. `down` removes the ones that did not exist before `up` once
// they are empty again (children before parents).
var sharedHostPaths = []string{
	"/run/containerd/s", "/run/containerd",
	"/var/lib/cni/results", "/var/lib/cni",
	"/var/log/containers", "/var/log/pods",
	kubeletDevicePluginSocket, "/var/lib/kubelet/device-plugins", "/var/lib/kubelet",
	"/run/netns",
	DataRoot, RunRoot,
}

// kubeletDevicePluginSocket is where every kubelet serves the device plugin
// registration API, whatever its --root-dir. Two kubelets on one host share
// it, so only the last local cluster to go down removes it.
const kubeletDevicePluginSocket = "/var/lib/kubelet/device-plugins/kubelet.sock"

// hostPaths records, per shared host path, whether it existed before `up`
// and (for /run/netns) whether it was a mount point.
type hostPaths struct {
	Existed       map[string]bool `json:"existed"`
	NetnsWasMount bool            `json:"netnsWasMount"`
}

func recordHostPaths() hostPaths {
	hp := hostPaths{Existed: map[string]bool{}}
	for _, p := range sharedHostPaths {
		_, err := os.Stat(p)
		hp.Existed[p] = err == nil
	}
	hp.NetnsWasMount = isMountPoint("/run/netns")
	return hp
}

// cleanHostPaths removes our entries from shared host directories, then the
// directories we created, if nothing else uses them now.
func cleanHostPaths(st *state, l layout, sandboxes []string) []error {
	var errs []error
	// Container log links the kubelet made for our pods.
	if entries, err := os.ReadDir("/var/log/containers"); err == nil {
		for _, e := range entries {
			p := filepath.Join("/var/log/containers", e.Name())
			if target, err := os.Readlink(p); err == nil && strings.HasPrefix(target, l.podLogs()+"/") {
				if err := os.Remove(p); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	// libcni caches each attachment's result as <network>-<sandbox>-<if>:
	// our pod network's, and containerd's loopback ones for our sandboxes.
	patterns := []string{"kubeproof-" + l.name + "-*"}
	for _, id := range sandboxes {
		patterns = append(patterns, "cni-loopback-"+id+"-*")
	}
	for _, pattern := range patterns {
		matches, _ := filepath.Glob(filepath.Join("/var/lib/cni/results", pattern))
		for _, m := range matches {
			if err := os.Remove(m); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if st == nil {
		// Without a record of what existed, only our own roots are surely
		// ours to remove.
		for _, p := range []string{DataRoot, RunRoot} {
			if dirEmpty(p) {
				if err := os.Remove(p); err != nil {
					errs = append(errs, err)
				}
			}
		}
		return errs
	}
	if !st.HostPaths.NetnsWasMount && isMountPoint("/run/netns") && dirEmpty("/run/netns") {
		if err := syscall.Unmount("/run/netns", syscall.MNT_DETACH); err != nil {
			errs = append(errs, fmt.Errorf("unmount /run/netns: %w", err))
		}
	}
	if existed, known := st.HostPaths.Existed[kubeletDevicePluginSocket]; known && !existed && len(otherClusters(l.name)) == 0 {
		if err := os.Remove(kubeletDevicePluginSocket); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	for _, p := range sharedHostPaths {
		if existed, known := st.HostPaths.Existed[p]; known && !existed && dirEmpty(p) {
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

func dirEmpty(p string) bool {
	entries, err := os.ReadDir(p)
	return err == nil && len(entries) == 0
}

// mounts returns mount points from /proc/self/mountinfo with their fs type.
func mounts() ([][2]string, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	var out [][2]string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// Fields: id parent major:minor root mountpoint options ... - fstype source superopts
		sep := -1
		for i, x := range f {
			if x == "-" {
				sep = i
				break
			}
		}
		if len(f) < 5 || sep < 0 || sep+1 >= len(f) {
			continue
		}
		out = append(out, [2]string{unescapeMount(f[4]), f[sep+1]})
	}
	return out, nil
}

// unescapeMount decodes mountinfo's octal escapes (\040 for space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isMountPoint(p string) bool {
	ms, err := mounts()
	if err != nil {
		return false
	}
	for _, m := range ms {
		if m[0] == p {
			return true
		}
	}
	return false
}

// unmountUnder unmounts every mount point below the given directories,
// deepest first (pod volumes, container root filesystems, namespace files).
func unmountUnder(dirs ...string) []error {
	ms, err := mounts()
	if err != nil {
		return []error{err}
	}
	var targets []string
	for _, m := range ms {
		for _, d := range dirs {
			if m[0] == d || strings.HasPrefix(m[0], d+"/") {
				targets = append(targets, m[0])
				break
			}
		}
	}
	sort.Slice(targets, func(i, j int) bool { return len(targets[i]) > len(targets[j]) })
	var errs []error
	for _, t := range targets {
		if err := syscall.Unmount(t, 0); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			// Still busy: detach it, the kernel frees it once unused.
			if err := syscall.Unmount(t, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("unmount %s: %w", t, err))
			}
		}
	}
	return errs
}

// cgroupMounts returns the mount points of every cgroup hierarchy (v1 and v2).
func cgroupMounts() ([]string, error) {
	ms, err := mounts()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range ms {
		if m[1] == "cgroup" || m[1] == "cgroup2" {
			out = append(out, m[0])
		}
	}
	return out, nil
}

// makeCgroups creates the kubelet's cgroupRoot in every hierarchy; the
// kubelet refuses to start without it. A new cpuset group is empty and
// cannot hold tasks until it gets its parent's CPUs and memory nodes.
func makeCgroups(l layout) error {
	roots, err := cgroupMounts()
	if err != nil {
		return err
	}
	for _, root := range roots {
		dir := filepath.Join(root, l.cgroupName())
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

// cgroupProcs lists the processes in our cgroup tree of every hierarchy.
func cgroupProcs(l layout) []int {
	roots, _ := cgroupMounts()
	seen := map[int]bool{}
	var pids []int
	for _, root := range roots {
		_ = filepath.WalkDir(filepath.Join(root, l.cgroupName()), func(p string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			data, err := os.ReadFile(filepath.Join(p, "cgroup.procs"))
			if err != nil {
				return nil
			}
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
					seen[pid] = true
					pids = append(pids, pid)
				}
			}
			return nil
		})
	}
	return pids
}

// removeCgroups kills what is left in our cgroups and removes them, deepest
// first.
func removeCgroups(l layout) []error {
	var errs []error
	for _, pid := range cgroupProcs(l) {
		if err := process.Kill(pid, 10*time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	roots, err := cgroupMounts()
	if err != nil {
		return append(errs, err)
	}
	for _, root := range roots {
		top := filepath.Join(root, l.cgroupName())
		var dirs []string
		_ = filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			if err := os.Remove(d); err != nil && !os.IsNotExist(err) {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
			}
		}
	}
	return errs
}

// kubeletSysctls are the kernel settings a kubelet changes at start
// (vm.overcommit_memory, kernel.panic and friends). They are global, so we
// note their values before the first local cluster starts and restore them
// when the last one goes down.
var kubeletSysctls = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
}

func sysctlFile() string { return filepath.Join(DataRoot, "host-sysctls.json") }

func saveHostSysctls() error {
	if _, err := os.Stat(sysctlFile()); err == nil {
		return nil // another local cluster saved the originals
	}
	values := map[string]string{}
	for _, k := range kubeletSysctls {
		data, err := os.ReadFile(filepath.Join("/proc/sys", k))
		if err != nil {
			continue
		}
		values[k] = strings.TrimSpace(string(data))
	}
	data, err := json.MarshalIndent(values, "", "  ")
	if err != nil {
		return fmt.Errorf("encode host sysctls: %w", err)
	}
	if err := os.WriteFile(sysctlFile(), data, 0o600); err != nil {
		return fmt.Errorf("save host sysctls: %w", err)
	}
	return nil
}

// restoreHostSysctls puts the saved values back if no other local cluster
// remains.
func restoreHostSysctls(self string) error {
	if others := otherClusters(self); len(others) > 0 {
		return nil
	}
	data, err := os.ReadFile(sysctlFile())
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read saved host sysctls: %w", err)
	}
	var values map[string]string
	if err := json.Unmarshal(data, &values); err != nil {
		return fmt.Errorf("parse saved host sysctls: %w", err)
	}
	for k, v := range values {
		if err := os.WriteFile(filepath.Join("/proc/sys", k), []byte(v), 0o644); err != nil {
			return fmt.Errorf("restore %s: %w", k, err)
		}
	}
	return os.Remove(sysctlFile())
}

// otherClusters lists local clusters other than self that have state.
func otherClusters(self string) []string {
	entries, err := os.ReadDir(DataRoot)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != self {
			if _, err := os.Stat(filepath.Join(DataRoot, e.Name(), "state.json")); err == nil {
				out = append(out, e.Name())
			}
		}
	}
	return out
}
