package observer

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubeproof/kubeproof/kube/observe"
)

func node(name string, conds ...corev1.NodeCondition) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Conditions: conds}}
}

func cond(t, status, reason string) corev1.NodeCondition {
	return corev1.NodeCondition{Type: corev1.NodeConditionType(t), Status: corev1.ConditionStatus(status), Reason: reason, Message: reason + " message"}
}

// watchStarted is closed once a watch of Nodes has started: the fake's
// watches see only what happens after they start, so a test's updates
// wait for it, as a real watch would replay them from the list's
// resourceVersion.
func watchStarted(client *fake.Clientset) <-chan struct{} {
	watching := make(chan struct{})
	client.PrependWatchReactor("nodes", func(a k8stesting.Action) (bool, watch.Interface, error) {
		w, err := client.Tracker().Watch(a.GetResource(), a.GetNamespace())
		close(watching)
		return true, w, err
	})
	return watching
}

// TestNodeConditions: the Node's state at the start, then every change the
// watch delivers, per condition type asked for; a condition the Node does
// not have stays empty. The evidence is of the type lint checks claims
// against.
func TestNodeConditions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := fake.NewClientset(node("n1", cond("Ready", "True", "KubeletReady"), cond("MemoryPressure", "False", "KubeletHasSufficientMemory")))
	spec := &NodeConditions{Types: []string{"Ready", "MemoryPressure", "NetworkUnavailable"}}
	if errs := spec.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	watching := watchStarted(client)
	env := &Env{Client: client, Start: time.Now(), APITimeout: 10 * time.Second}
	rec, err := spec.Start(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Stop()
	nr := rec.(*nodeRecorder)
	select {
	case <-watching:
	case <-ctx.Done():
		t.Fatal("the watch did not start")
	}
	rv := 1
	for _, n := range []*corev1.Node{
		node("n1", cond("Ready", "Unknown", "NodeStatusUnknown"), cond("MemoryPressure", "False", "KubeletHasSufficientMemory")),
		node("n1", cond("Ready", "False", "KubeletNotReady"), cond("MemoryPressure", "False", "KubeletHasSufficientMemory")),
		node("n1", cond("Ready", "False", "KubeletNotReady"), cond("MemoryPressure", "True", "KubeletHasInsufficientMemory")),
	} {
		// The fake keeps no resourceVersions; the watch needs one.
		rv++
		n.ResourceVersion = strconv.Itoa(rv)
		if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := nr.rec.WaitFor(ctx, 10*time.Second, "three updates of n1", func(evs []observe.Event) bool { return len(evs) >= 3 }, nil); err != nil {
		t.Fatal(err)
	}
	v, err := rec.Evidence()
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	typed := reflect.New(spec.Evidence()).Interface()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(typed); err != nil {
		t.Fatalf("the recorded evidence is not of the declared type: %v", err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]any{
		"node":                                   "n1",
		"count":                                  float64(4),
		"conditions.Ready.status":                "False",
		"conditions.Ready.reason":                "KubeletNotReady",
		"conditions.Ready.statuses":              []any{"True", "Unknown", "False"},
		"conditions.MemoryPressure.statuses":     []any{"False", "True"},
		"conditions.MemoryPressure.message":      "KubeletHasInsufficientMemory message",
		"conditions.NetworkUnavailable.status":   "",
		"conditions.NetworkUnavailable.statuses": []any{},
		"conditions.NetworkUnavailable.changes":  []any{},
	} {
		if g := lookup(got, path); !reflect.DeepEqual(g, want) {
			t.Errorf("%s = %#v, want %#v", path, g, want)
		}
	}
	changes := lookup(got, "conditions.Ready.changes").([]any)
	if len(changes) != 3 || changes[0].(map[string]any)["at"].(float64) != 0 || changes[2].(map[string]any)["reason"] != "KubeletNotReady" {
		t.Errorf("Ready's changes: %v", changes)
	}
}

// Without a node named, a cluster of several nodes is refused, naming
// them; with one named, it is the one followed.
func TestNodeConditionsWhichNode(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset(node("a"), node("b"))
	env := &Env{Client: client, Start: time.Now(), APITimeout: 10 * time.Second}
	_, err := (&NodeConditions{Types: []string{"Ready"}}).Start(ctx, env)
	if err == nil || !strings.Contains(err.Error(), "the cluster has 2 (a, b): name one") {
		t.Errorf("two nodes, none named: %v", err)
	}
	rec, err := (&NodeConditions{Node: "b", Types: []string{"Ready"}}).Start(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Stop()
	v, _ := rec.Evidence()
	if got := v.(map[string]any); got["node"] != "b" || got["count"] != 1 {
		t.Errorf("node %v (%v versions), want b (1)", got["node"], got["count"])
	}
}

// A Node named that does not exist yet (the probe creates it) is followed
// from its creation.
func TestNodeConditionsOfANewNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := fake.NewClientset()
	watching := watchStarted(client)
	rec, err := (&NodeConditions{Node: "new", Types: []string{"Ready"}}).Start(ctx, &Env{Client: client, Start: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Stop()
	select {
	case <-watching:
	case <-ctx.Done():
		t.Fatal("the watch did not start")
	}
	n := node("new", cond("Ready", "False", "NotYet"))
	n.ResourceVersion = "5"
	if _, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.(*nodeRecorder).rec.WaitFor(ctx, 10*time.Second, "Node new created", func(evs []observe.Event) bool { return len(evs) == 1 }, nil); err != nil {
		t.Fatal(err)
	}
	v, _ := rec.Evidence()
	h := v.(map[string]any)["conditions"].(map[string]*ConditionHistory)["Ready"]
	if v.(map[string]any)["count"] != 1 || h.Status != "False" || !reflect.DeepEqual(h.Statuses, []string{"False"}) {
		t.Errorf("evidence %v, Ready %+v", v, h)
	}
}

func TestNodeConditionsValidate(t *testing.T) {
	for _, tc := range []struct {
		spec NodeConditions
		want string
	}{
		{NodeConditions{}, "needs types"},
		{NodeConditions{Types: []string{"Ready", "Ready"}}, "named twice"},
		{NodeConditions{Types: []string{"example.com/gate"}}, "must be letters and digits"},
	} {
		errs := tc.spec.Validate()
		if len(errs) != 1 || !strings.Contains(errs[0], tc.want) {
			t.Errorf("%+v: %v, want %q", tc.spec, errs, tc.want)
		}
	}
}
