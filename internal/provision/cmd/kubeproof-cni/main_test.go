//go:build linux

package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeproof/kubeproof/internal/provision/internal/cni"
)

func node(name, cidr string, addrs ...corev1.NodeAddress) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{PodCIDR: cidr}, Status: corev1.NodeStatus{Addresses: addrs}}
}

// Each node is a peer at its first IPv4 InternalIP (not its hostname, not
// an IPv6 one); this node's pod CIDR is its configuration's, once it has one.
func TestPeersOf(t *testing.T) {
	peers, cidr := peersOf("n1", []*corev1.Node{
		node("n1", "10.244.0.0/24", corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "172.18.0.2"}),
		node("n2", "10.244.1.0/24", corev1.NodeAddress{Type: corev1.NodeHostName, Address: "n2"},
			corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "fc00::3"}, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "172.18.0.3"}),
		node("n3", ""),
	})
	want := []cni.Peer{{Name: "n1", PodCIDR: "10.244.0.0/24", Address: "172.18.0.2"}, {Name: "n2", PodCIDR: "10.244.1.0/24", Address: "172.18.0.3"}, {Name: "n3"}}
	if cidr != "10.244.0.0/24" || len(peers) != 3 {
		t.Fatalf("peers %+v, cidr %q", peers, cidr)
	}
	for i := range want {
		if peers[i] != want[i] {
			t.Errorf("peer %d: %+v, want %+v", i, peers[i], want[i])
		}
	}
	if _, cidr := peersOf("n3", []*corev1.Node{node("n3", "")}); cidr != "" {
		t.Errorf("a node without a pod CIDR yet: %q", cidr)
	}
}

// The configuration is written whole (through a file renamed into place)
// and only when it changes, so that the runtime sees one version at a time.
func TestWriteConfig(t *testing.T) {
	dir := t.TempDir()
	n := cni.Network{Name: "kubeproof", Bridge: "kp-pods", PodCIDR: "10.244.0.0/24"}
	if err := writeConfig(dir, n); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, cni.ConfigFile)
	want, _ := cni.Conflist(n)
	got, err := os.ReadFile(path)
	if err != nil || string(got) != string(want) {
		t.Fatalf("wrote %s, %v", got, err)
	}
	old := time.Unix(1, 0)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if err := writeConfig(dir, n); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); !fi.ModTime().Equal(old) {
		t.Error("an unchanged configuration was written again")
	}
	n.PodCIDR = "10.244.9.0/24"
	if err := writeConfig(dir, n); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.ModTime().Equal(old) {
		t.Error("a changed configuration was not written")
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Error("the temporary file stayed")
	}
}
