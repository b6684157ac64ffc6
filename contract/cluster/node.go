package cluster

import (
	"fmt"
	"path"
	"strings"
)

// NodeLayout says where a provider's nodes keep the things documents name
// by path: the CNI configuration and programs, the kubelet's directory, the
// Pods' logs. A node that kubeadm or kind set up keeps them where
// StandardNodeLayout says; a provider whose nodes keep them elsewhere says
// where, so that a claim about /etc/cni/net.d is not judged on a directory
// that only kubeproof's layout put somewhere else.
type NodeLayout struct {
	// CNIConfDir holds the pod network's configuration (/etc/cni/net.d).
	CNIConfDir string `json:"cniConfDir"`
	// CNIBinDir holds the CNI plugins' programs (/opt/cni/bin).
	CNIBinDir string `json:"cniBinDir"`
	// KubeletRoot is the kubelet's --root-dir (/var/lib/kubelet): Pods'
	// directories, volumes, plugins.
	KubeletRoot string `json:"kubeletRoot"`
	// PodLogDir holds the containers' logs (/var/log/pods).
	PodLogDir string `json:"podLogDir"`
	// StaticPodDir is the kubelet's staticPodPath (/etc/kubernetes/manifests).
	StaticPodDir string `json:"staticPodDir"`
	// ContainerdRoot is containerd's root (/var/lib/containerd).
	ContainerdRoot string `json:"containerdRoot"`
}

// StandardNodeLayout is where a node set up by kubeadm (kind's nodes among
// them) keeps things: the paths Kubernetes' documentation names.
var StandardNodeLayout = NodeLayout{
	CNIConfDir:     "/etc/cni/net.d",
	CNIBinDir:      "/opt/cni/bin",
	KubeletRoot:    "/var/lib/kubelet",
	PodLogDir:      "/var/log/pods",
	StaticPodDir:   "/etc/kubernetes/manifests",
	ContainerdRoot: "/var/lib/containerd",
}

// LayoutEntry is one place of a NodeLayout: its name (the JSON name, which
// a path placeholder uses: {kubeletRoot}/pods) and what it holds.
type LayoutEntry struct {
	Name, What string
	get        func(NodeLayout) string
}

// LayoutEntries are the places of a NodeLayout.
var LayoutEntries = []LayoutEntry{
	{"cniConfDir", "the CNI configuration directory", func(l NodeLayout) string { return l.CNIConfDir }},
	{"cniBinDir", "the CNI plugins' directory", func(l NodeLayout) string { return l.CNIBinDir }},
	{"kubeletRoot", "the kubelet's root directory", func(l NodeLayout) string { return l.KubeletRoot }},
	{"podLogDir", "the Pods' log directory", func(l NodeLayout) string { return l.PodLogDir }},
	{"staticPodDir", "the static Pods' directory", func(l NodeLayout) string { return l.StaticPodDir }},
	{"containerdRoot", "containerd's root directory", func(l NodeLayout) string { return l.ContainerdRoot }},
}

// Dir is the entry's directory in l.
func (e LayoutEntry) Dir(l NodeLayout) string { return e.get(l) }

// NodePath is a path on a node as a claims file gives it, resolved against
// a provider's layout.
type NodePath struct {
	// Path is the path to read on the node.
	Path string
	// Entry is the layout's place the path lies in (or names with a
	// placeholder), if any.
	Entry *LayoutEntry
	// Placeholder: the path named its place ({kubeletRoot}/pods), so it
	// reads the provider's directory wherever it is.
	Placeholder bool
}

// ResolveNodePath resolves p on a node of layout l. A path that begins
// with a placeholder ({kubeletRoot}) reads the provider's directory. A
// literal path inside a standard place (/var/lib/kubelet/pods) is a claim
// about where a node keeps things: on a provider whose node keeps that
// place elsewhere, it is not checkable, and the error says where the
// provider keeps it. Other paths (/proc, /sys/fs/cgroup, /etc/os-release)
// are read as given.
func ResolveNodePath(p string, l NodeLayout) (NodePath, error) {
	for i, e := range LayoutEntries {
		ph := "{" + e.Name + "}"
		if rest, ok := strings.CutPrefix(p, ph); ok && (rest == "" || strings.HasPrefix(rest, "/")) {
			return NodePath{Path: path.Clean(e.Dir(l) + rest), Entry: &LayoutEntries[i], Placeholder: true}, nil
		}
	}
	p = path.Clean(p)
	for i, e := range LayoutEntries {
		std := e.Dir(StandardNodeLayout)
		if p != std && !strings.HasPrefix(p, std+"/") {
			continue
		}
		if own := e.Dir(l); own != std {
			return NodePath{}, fmt.Errorf("%s is in %s (%s), which this provider's nodes keep in %s: a claim about %s would be about kubeproof's layout, not Kubernetes' (write {%s} to read the provider's directory)",
				p, e.What, std, own, std, e.Name)
		}
		return NodePath{Path: p, Entry: &LayoutEntries[i]}, nil
	}
	return NodePath{Path: p}, nil
}
