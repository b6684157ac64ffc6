package cluster

import (
	"strings"
	"testing"
)

// A literal path in a standard place is read where the standard layout
// keeps it, and is refused (naming the provider's directory) on a node
// that keeps it elsewhere; a placeholder reads the provider's directory;
// other paths are read as given.
func TestResolveNodePath(t *testing.T) {
	own := StandardNodeLayout
	own.KubeletRoot = "/var/lib/kubeproof/c/kubelet"
	for _, tc := range []struct {
		path   string
		layout NodeLayout
		want   string
		err    string
	}{
		{"/var/lib/kubelet/pods/x", StandardNodeLayout, "/var/lib/kubelet/pods/x", ""},
		{"/var/lib/kubelet/pods/x", own, "", "keep in /var/lib/kubeproof/c/kubelet"},
		{"/var/lib/kubelet", own, "", "kubelet's root directory"},
		{"{kubeletRoot}/pods", own, "/var/lib/kubeproof/c/kubelet/pods", ""},
		{"/etc/cni/net.d", own, "/etc/cni/net.d", ""},
		{"/var/lib/kubeletx", own, "/var/lib/kubeletx", ""},
		{"/proc/1/status", own, "/proc/1/status", ""},
	} {
		got, err := ResolveNodePath(tc.path, tc.layout)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one with %q", tc.path, err, tc.err)
		case tc.err == "" && (err != nil || got.Path != tc.want):
			t.Errorf("%s: %q, %v; want %q", tc.path, got.Path, err, tc.want)
		}
	}
}
