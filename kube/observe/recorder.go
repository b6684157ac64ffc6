package observe

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
}

// Record lists through lw (to learn the current resourceVersion) and
// records every later event. Objects that existed before are not events.
// The watch resumes by itself after a dropped connection.
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
	r := &Recorder{changed: make(chan struct{}), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		defer rw.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-rw.ResultChan():
				if !ok {
					r.fail(fmt.Errorf("watch ended"))
					return
				}
				if ev.Type == watch.Error {
					r.fail(fmt.Errorf("watch error: %v", ev.Object))
					continue
				}
				r.add(Event{Type: ev.Type, Received: time.Now(), Object: ev.Object})
			}
		}
	}()
	return r, nil
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
