package local

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubeproof/kubeproof/internal/provision/internal/hostchange"
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
	hp.NetnsWasMount = hostchange.IsMountPoint("/run/netns")
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
			if hostchange.DirEmpty(p) {
				if err := os.Remove(p); err != nil {
					errs = append(errs, err)
				}
			}
		}
		return errs
	}
	if !st.HostPaths.NetnsWasMount && hostchange.IsMountPoint("/run/netns") && hostchange.DirEmpty("/run/netns") {
		if err := hostchange.Detach("/run/netns"); err != nil {
			errs = append(errs, fmt.Errorf("unmount /run/netns: %w", err))
		}
	}
	if existed, known := st.HostPaths.Existed[kubeletDevicePluginSocket]; known && !existed && len(otherClusters(l.name)) == 0 {
		if err := os.Remove(kubeletDevicePluginSocket); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	for _, p := range sharedHostPaths {
		if existed, known := st.HostPaths.Existed[p]; known && !existed && hostchange.DirEmpty(p) {
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// hostSysctls are the kubelet's global kernel settings: the first local or
// kind cluster records the machine's values, the last one restores them.
var hostSysctls = hostchange.Sysctls{File: filepath.Join(DataRoot, "host-sysctls.json"), Keys: hostchange.KubeletSysctls}

// hostHolder names a local cluster among the holders of hostSysctls and
// of the cgroup v2 root's controllers (savedControllers).
func hostHolder(name string) string { return "local/" + name }

// hostModules are the kernel modules a node network needs and the kernel
// does not load on first use (as it does bridge, veth, overlay and
// iptables' tables): loaded while any local cluster runs, if they were not.
var hostModules = hostchange.Modules{File: filepath.Join(DataRoot, "host-modules.json"), Modules: []hostchange.Module{hostchange.BrNetfilter}}

// savedControllers keeps, while any local cluster runs on a cgroup v2
// machine, which controllers the root had enabled before the first.
var savedControllers = filepath.Join(DataRoot, "host-cgroup-controllers.json")

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
