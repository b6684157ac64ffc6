// Package containerdconf writes the CRI part of a containerd 2
// configuration (version 3) for the nodes kubeproof makes: the local
// provider's node and kind's node image share it, so the keys that moved
// between containerd's configuration versions are spelled in one place.
package containerdconf

import (
	"fmt"
	"strings"
)

// CRI is what differs between the nodes kubeproof makes.
type CRI struct {
	// Snapshotter unpacks images; images loaded into a node must be
	// unpacked for it.
	Snapshotter string
	// DiscardUnpackedLayers drops compressed layers once unpacked (a kind
	// node's disk is the host's).
	DiscardUnpackedLayers bool
	// Sandbox is the pause image, pinned so the kubelet's image GC keeps it.
	Sandbox string
	// RegistryConfigPath holds a hosts.toml per registry.
	RegistryConfigPath string
	// SystemdCgroup: cgroups through systemd (a kind node boots systemd)
	// rather than cgroupfs.
	SystemdCgroup bool
	// ShimPath and RuncPath name the runc shim and runc to use; empty: from
	// PATH.
	ShimPath, RuncPath string
	// RuncRoot is runc's state directory; empty: runc's default.
	RuncRoot string
	// NetnsUnderStateDir keeps pod network namespaces in containerd's state
	// directory (which `down` removes) instead of /var/run/netns.
	NetnsUnderStateDir bool
	CNIBinDir          string
	CNIConfDir         string
}

// Sections is the CRI images and runtime plugin sections. Every node
// kubeproof makes runs without CAP_SYS_RESOURCE on some hosts (this VM),
// where containerd must not lower a sandbox's oom_score_adj: runc fails to
// create any sandbox otherwise; and tolerates a missing hugetlb controller.
func (c CRI) Sections() string {
	var b strings.Builder
	line := func(indent int, format string, args ...any) {
		b.WriteString(strings.Repeat("  ", indent))
		fmt.Fprintf(&b, format, args...)
		b.WriteByte('\n')
	}
	const images, runtime = `[plugins."io.containerd.cri.v1.images"`, `[plugins."io.containerd.cri.v1.runtime"`
	line(0, "%s]", images)
	line(1, "snapshotter = %q", c.Snapshotter)
	line(1, "discard_unpacked_layers = %t", c.DiscardUnpackedLayers)
	line(1, "%s.pinned_images]", images)
	line(2, "sandbox = %q", c.Sandbox)
	line(1, "%s.registry]", images)
	line(2, "config_path = %q", c.RegistryConfigPath)
	b.WriteByte('\n')
	line(0, "%s]", runtime)
	line(1, "restrict_oom_score_adj = true")
	line(1, "tolerate_missing_hugetlb_controller = true")
	line(1, "netns_mounts_under_state_dir = %t", c.NetnsUnderStateDir)
	line(1, "enable_selinux = false")
	line(1, "%s.containerd]", runtime)
	line(2, `default_runtime_name = "runc"`)
	line(2, "%s.containerd.runtimes.runc]", runtime)
	line(3, `runtime_type = "io.containerd.runc.v2"`)
	if c.ShimPath != "" {
		line(3, "runtime_path = %q", c.ShimPath)
	}
	line(3, "%s.containerd.runtimes.runc.options]", runtime)
	line(4, "SystemdCgroup = %t", c.SystemdCgroup)
	if c.RuncPath != "" {
		line(4, "BinaryName = %q", c.RuncPath)
	}
	if c.RuncRoot != "" {
		line(4, "Root = %q", c.RuncRoot)
	}
	line(1, "%s.cni]", runtime)
	line(2, "bin_dirs = [%q]", c.CNIBinDir)
	line(2, "conf_dir = %q", c.CNIConfDir)
	// containerd sets each sandbox's lo up itself rather than running the
	// loopback plugin for every sandbox's ADD and DEL: two process starts
	// fewer per Pod, the costliest thing a node does on a small VM.
	line(2, "use_internal_loopback = true")
	return b.String()
}
