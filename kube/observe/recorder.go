package observe

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// Event is one watch event with the time this process received it.
type Event struct {
	Type     watch.EventType
	Received time.Time
	Object   runtime.Object
}

// Recorder keeps every event of a watch from the moment it was started, so
// that a check can assert on the whole sequence of states an object went
// through (Pending, bound, Running, Ready), not only the last one.
type Recorder struct {
	mu      sync.Mutex
	events  []Event
	changed chan struct{} // closed and replaced on every new event
	err     error
	cancel  context.CancelFunc
	done    chan struct{}
	// known are the objects seen (listed or watched) and not deleted, by
	// UID: their resourceVersion and last state, for a relist to compare.
	known map[types.UID]string
	last  map[types.UID]runtime.Object
}

// Record lists through lw (to learn the current resourceVersion) and
// records every later event. Objects that existed before are not events.
// The watch resumes by itself after a dropped connection, and after an API
// server that restarted refused to resume it (relist).
func Record(ctx context.Context, lw cache.ListerWatcherWithContext) (*Recorder, error) {
	list, err := lw.ListWithContext(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list before watch: %w", err)
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, fmt.Errorf("list before watch: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, lm.GetResourceVersion(), lw)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("start watch: %w", err)
	}
	r := &Recorder{changed: make(chan struct{}), cancel: cancel, done: make(chan struct{}), known: map[types.UID]string{}}
	if err := meta.EachListItem(list, func(o runtime.Object) error { r.know(o); return nil }); err != nil {
		cancel()
		return nil, fmt.Errorf("list before watch: %w", err)
	}
	go func() {
		defer close(r.done)
		for {
			r.follow(ctx, rw)
			if ctx.Err() != nil {
				return
			}
			if rw = r.relist(ctx, lw); rw == nil {
				return
			}
		}
	}()
	return r, nil
}

// follow records rw's events until it ends or ctx is done.
func (r *Recorder) follow(ctx context.Context, rw *watchtools.RetryWatcher) {
	defer rw.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-rw.ResultChan():
			if !ok {
				return
			}
			if ev.Type == watch.Error {
				// 410 Gone (an API server that restarted has a new watch
				// cache, which holds no older resourceVersion) ends the
				// watcher; follow's caller lists again.
				r.fail(fmt.Errorf("watch error: %v", ev.Object))
				continue
			}
			r.know(ev.Object)
			if ev.Type == watch.Deleted {
				r.forget(ev.Object)
			}
			r.add(Event{Type: ev.Type, Received: time.Now(), Object: ev.Object})
		}
	}
}

// relist lists again once a watch has ended, records what changed since
// the last event as events (an object not seen before as ADDED, one whose
// resourceVersion changed as MODIFIED, one no longer listed as DELETED,
// with its last state), and watches on from the list. Between lists the API
// server may be down (restarting), with no watch to offer: it is asked
// again every 250 ms until ctx ends.
func (r *Recorder) relist(ctx context.Context, lw cache.ListerWatcherWithContext) *watchtools.RetryWatcher {
	for {
		list, err := lw.ListWithContext(ctx, metav1.ListOptions{})
		if err == nil {
			var rw *watchtools.RetryWatcher
			lm, aerr := meta.ListAccessor(list)
			if aerr == nil {
				rw, err = watchtools.NewRetryWatcherWithContext(ctx, lm.GetResourceVersion(), lw)
			} else {
				err = aerr
			}
			if err == nil {
				r.catchUp(list)
				return rw
			}
		}
		r.fail(fmt.Errorf("watch ended; listing again: %w", err))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// catchUp records the difference between what the recorder knew and a
// new list as events.
func (r *Recorder) catchUp(list runtime.Object) {
	now := time.Now()
	listed := map[types.UID]bool{}
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		a, err := meta.Accessor(o)
		if err != nil {
			return nil //nolint:nilerr // not an object: nothing to record
		}
		listed[a.GetUID()] = true
		r.mu.Lock()
		rv, seen := r.known[a.GetUID()]
		r.mu.Unlock()
		switch {
		case !seen:
			r.know(o)
			r.add(Event{Type: watch.Added, Received: now, Object: o})
		case rv != a.GetResourceVersion():
			r.know(o)
			r.add(Event{Type: watch.Modified, Received: now, Object: o})
		}
		return nil
	})
	r.mu.Lock()
	var gone []runtime.Object
	for uid := range r.known {
		if !listed[uid] {
			gone = append(gone, r.last[uid])
		}
	}
	r.mu.Unlock()
	for _, o := range gone {
		if o == nil {
			continue
		}
		r.forget(o)
		r.add(Event{Type: watch.Deleted, Received: now, Object: o})
	}
}

// know notes an object's resourceVersion and last state.
func (r *Recorder) know(o runtime.Object) {
	a, err := meta.Accessor(o)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.known[a.GetUID()] = a.GetResourceVersion()
	if r.last == nil {
		r.last = map[types.UID]runtime.Object{}
	}
	r.last[a.GetUID()] = o
}

// forget drops a deleted object.
func (r *Recorder) forget(o runtime.Object) {
	a, err := meta.Accessor(o)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.known, a.GetUID())
	delete(r.last, a.GetUID())
}

func (r *Recorder) add(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *Recorder) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.err = err
	close(r.changed)
	r.changed = make(chan struct{})
}

// Events returns a copy of the events so far.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// WaitFor blocks until pred holds for the events so far, or timeout. The
// error names what was awaited and describes the last event.
func (r *Recorder) WaitFor(ctx context.Context, timeout time.Duration, what string, pred func([]Event) bool, describe func(Event) string) ([]Event, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		events := append([]Event(nil), r.events...)
		changed, werr := r.changed, r.err
		r.mu.Unlock()
		if pred(events) {
			return events, nil
		}
		select {
		case <-changed:
		case <-deadline.C:
			last := ""
			if len(events) > 0 && describe != nil {
				last = describe(events[len(events)-1])
			}
			return events, &TimeoutError{What: what, Timeout: timeout, LastSeen: last, Err: werr}
		case <-ctx.Done():
			return events, fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		}
	}
}

// Stop ends the watch.
func (r *Recorder) Stop() {
	r.cancel()
	<-r.done
}

// Latest folds events into the objects as the watch last saw them: each
// object's last state, by name, those deleted left out. Events about other
// types are ignored.
func Latest[T runtime.Object](events []Event) map[string]T {
	out := map[string]T{}
	for _, e := range events {
		obj, ok := e.Object.(T)
		if !ok {
			continue
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			continue
		}
		if e.Type == watch.Deleted {
			delete(out, m.GetName())
		} else {
			out[m.GetName()] = obj
		}
	}
	return out
}
