package network

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeproof/kubeproof/kube/observe"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
	"github.com/kubeproof/kubeproof/kube/podsecurity/podsecuritytest"
)

// The link behind an interface index, as `ip -o -d link show` prints it on
// a node: its name (without the @peer), its kind and its bridge.
func TestLinkByIndex(t *testing.T) {
	out := `1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000\    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00 promiscuity 0
7: kp-pods: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP mode DEFAULT group default qlen 1000\    link/ether 5a:1c:7e:00:00:01 brd ff:ff:ff:ff:ff:ff promiscuity 0 bridge forward_delay 1500
12: veth3a1b2c4d@if2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue master kp-pods state UP mode DEFAULT group default\    link/ether 9e:aa:bb:cc:dd:ee brd ff:ff:ff:ff:ff:ff link-netns cni-1234 promiscuity 1 veth bridge_slave state forwarding
`
	l, ok := linkByIndex(out, 12)
	if !ok || l != (nodeLink{name: "veth3a1b2c4d", kind: "veth", master: "kp-pods"}) {
		t.Errorf("index 12: %+v %t", l, ok)
	}
	if l, ok := linkByIndex(out, 7); !ok || l.kind != "bridge" || l.master != "" {
		t.Errorf("index 7: %+v", l)
	}
	if _, ok := linkByIndex(out, 2); ok {
		t.Error("an index the node does not have was found")
	}
}

func slice(rv string, ip string, ready bool) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "web-abc", ResourceVersion: rv},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}}}
}

// A Pod's endpoint as the EndpointSlices had it, in etcd's order of writes:
// listed not ready before the write that made the Pod Ready, then ready.
func TestEndpoints(t *testing.T) {
	events := []observe.Event{
		{Type: watch.Added, Object: slice("100", "10.244.0.9", false)},
		{Type: watch.Modified, Object: slice("120", "10.244.0.9", true)},
	}
	ready := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "110"}, Status: corev1.PodStatus{PodIP: "10.244.0.9"}}
	if notReadyBefore, listed := firstPass(events, ready); !notReadyBefore || !listed {
		t.Errorf("before Ready: not ready %t, listed %t", notReadyBefore, listed)
	}
	ready.ResourceVersion = "130"
	if notReadyBefore, _ := firstPass(events, ready); notReadyBefore {
		t.Error("an endpoint ready before the Pod's Ready write was not seen")
	}
	if r, found := endpointReady(events, "10.244.0.9"); !r || !found {
		t.Errorf("latest: ready %t, found %t", r, found)
	}
	if _, found := endpointReady(events, "10.244.0.10"); found {
		t.Error("an address no slice has was found")
	}
	if revision("x") != 0 || revision("42") != 42 {
		t.Error("revision")
	}
}

// The network specs' Pods pass the restricted Pod Security level.
func TestAppPod(t *testing.T) {
	p := appPod("server-a", map[string]string{"app": "web"})
	podsecuritytest.Passes(t, "the app Pod", podsecurity.LevelRestricted, p.ObjectMeta, p.Spec)
	if p.Spec.Containers[0].ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Error("the app Pod's readiness is not its /readyz")
	}
}
