package observer

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubeproof/kubeproof/claims/expect"
)

func slice(rv string, ready map[string]bool) *discoveryv1.EndpointSlice {
	es := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "web-abc", Namespace: "ns", ResourceVersion: rv,
		Labels: map[string]string{discoveryv1.LabelServiceName: "web"}}}
	for _, pod := range []string{"a", "b"} {
		r := ready[pod]
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.0.0.1"},
			TargetRef: &corev1.ObjectReference{Name: pod}, Conditions: discoveryv1.EndpointConditions{Ready: &r, Serving: &r}})
	}
	return es
}

// TestEndpointSlicesWait: a wait step on an endpointSlices observer holds
// its condition to the Service's endpoints as the watch has made them so
// far, and one that never holds times out naming what it last saw.
func TestEndpointSlicesWait(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := fake.NewClientset()
	watching := make(chan struct{})
	client.PrependWatchReactor("endpointslices", func(a k8stesting.Action) (bool, watch.Interface, error) {
		w, err := client.Tracker().Watch(a.GetResource(), a.GetNamespace())
		close(watching)
		return true, w, err
	})
	spec := &EndpointSlices{Service: "web"}
	rec, err := spec.Start(ctx, &Env{Client: client, Namespace: "ns", Start: time.Now(), APITimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Stop()
	<-watching
	// The observer records what happens after it starts, as a probe's
	// steps make the Service's slices.
	if _, err := client.DiscoveryV1().EndpointSlices("ns").Create(ctx, slice("1", map[string]bool{"a": true, "b": true}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w := rec.(Waiter)
	b := json.RawMessage(`["b"]`)
	onlyB := expect.Expectation{Evidence: "endpoints.last.ready", Equals: &b}
	if err := w.WaitField(ctx, time.Second, "endpoints: ready = [b]", "ready", onlyB.Holds); err == nil || !strings.Contains(err.Error(), "ready = [a b]") {
		t.Fatalf("a wait that cannot hold yet: %v, want a timeout naming ready = [a b]", err)
	}
	if _, err := client.DiscoveryV1().EndpointSlices("ns").Update(ctx, slice("2", map[string]bool{"b": true}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.WaitField(ctx, 10*time.Second, "endpoints: ready = [b]", "ready", onlyB.Holds); err != nil {
		t.Fatal(err)
	}
	if err := w.WaitDeleted(ctx, time.Second, "deleted"); err == nil {
		t.Error("an endpointSlices observer waited for a deletion")
	}
	ev, err := rec.Evidence()
	if err != nil {
		t.Fatal(err)
	}
	if got := ev.(EndpointsEvidence).Last; strings.Join(got.Ready, ",") != "b" || strings.Join(got.All, ",") != "a,b" {
		t.Errorf("last endpoints: %+v, want ready [b] of all [a b]", got)
	}
}
