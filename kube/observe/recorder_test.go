package observe

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// An API server that restarted refuses to resume a watch from before its
// start (410 Gone: its new watch cache holds no older resourceVersion).
// The recorder lists again and records what changed meanwhile: a Pod
// modified, one added, one deleted; then it watches on.
func TestRecordRelistsAfterGone(t *testing.T) {
	pod := func(name, rv string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), ResourceVersion: rv}}
	}
	lists := []*corev1.PodList{
		{ListMeta: metav1.ListMeta{ResourceVersion: "2"}, Items: []corev1.Pod{*pod("a", "1"), *pod("c", "2")}},
		{ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: []corev1.Pod{*pod("a", "5"), *pod("b", "7")}},
	}
	var mu sync.Mutex
	listed, watched := 0, 0
	later := watch.NewFake()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			mu.Lock()
			defer mu.Unlock()
			l := lists[min(listed, len(lists)-1)]
			listed++
			return l, nil
		},
		WatchFuncWithContext: func(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
			mu.Lock()
			defer mu.Unlock()
			watched++
			if watched > 1 {
				return later, nil
			}
			gone := watch.NewFake()
			go gone.Error(&apierrors.NewResourceExpired("too old resource version").ErrStatus)
			return gone, nil
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := Record(ctx, lw)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	events, err := r.WaitFor(ctx, 5*time.Second, "the relist's events", func(e []Event) bool { return len(e) >= 3 }, nil)
	if err != nil {
		t.Fatalf("%v (events %v)", err, events)
	}
	got := map[string]watch.EventType{}
	for _, e := range events {
		got[e.Object.(*corev1.Pod).Name] = e.Type
	}
	want := map[string]watch.EventType{"a": watch.Modified, "b": watch.Added, "c": watch.Deleted}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("pod %s: %s, want %s (all: %v)", k, got[k], v, got)
		}
	}
	later.Modify(pod("b", "10"))
	if _, err := r.WaitFor(ctx, 5*time.Second, "the next watch's event", func(e []Event) bool { return len(e) == 4 }, nil); err != nil {
		t.Fatal(err)
	}
}
