// Package observe waits for cluster state through watches, never through
// sleeps: every wait names what it awaits, has an explicit timeout, and on
// failure says what it saw last.
package observe

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// TimeoutError says what a wait awaited, for how long, and what it saw last.
type TimeoutError struct {
	What     string
	Timeout  time.Duration
	LastSeen string
	Err      error
}

func (e *TimeoutError) Error() string {
	last := e.LastSeen
	if last == "" {
		last = "nothing (no event arrived)"
	}
	return fmt.Sprintf("timed out after %s waiting for %s; last seen: %s", e.Timeout, e.What, last)
}

func (e *TimeoutError) Unwrap() error { return e.Err }

// Until lists and watches objects through lw and returns the first object for
// which cond holds. describe renders an object for the timeout error; a nil
// describe prints the object's name only.
func Until[T runtime.Object](ctx context.Context, timeout time.Duration, what string, lw cache.ListerWatcher,
	cond func(T) (bool, error), describe func(T) string) (T, error) {
	var zero T
	var mu sync.Mutex
	lastSeen := ""
	record := func(obj T) {
		s := ""
		if describe != nil {
			s = describe(obj)
		} else {
			s = fmt.Sprintf("%T", obj)
		}
		mu.Lock()
		lastSeen = s
		mu.Unlock()
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ev, err := watchtools.UntilWithSync(wctx, lw, newOf[T](), nil, func(e watch.Event) (bool, error) {
		obj, ok := e.Object.(T)
		if !ok {
			return false, nil
		}
		record(obj)
		if e.Type == watch.Deleted {
			return false, nil
		}
		return cond(obj)
	})
	if err != nil {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() != nil {
			return zero, fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		}
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, watchtools.ErrWatchClosed) || wctx.Err() != nil {
			return zero, &TimeoutError{What: what, Timeout: timeout, LastSeen: lastSeen, Err: err}
		}
		return zero, fmt.Errorf("waiting for %s: %w (last seen: %s)", what, err, lastSeen)
	}
	return ev.Object.(T), nil
}

// newOf returns a new, empty object of T's element type for the informer.
func newOf[T runtime.Object]() runtime.Object {
	var zero T
	return reflect.New(reflect.TypeOf(zero).Elem()).Interface().(runtime.Object)
}

// NameSelector returns a field selector for one object by name.
func NameSelector(name string) string {
	return fields.OneTermEqualSelector("metadata.name", name).String()
}

// Gone waits until no object is listed through lw any more (lw should select
// one object by name).
func Gone[T runtime.Object](ctx context.Context, timeout time.Duration, what string, lw cache.ListerWatcher, describe func(T) string) (bool, error) {
	var mu sync.Mutex
	lastSeen := ""
	note := func(obj runtime.Object) {
		if o, ok := obj.(T); ok && describe != nil {
			mu.Lock()
			lastSeen = describe(o)
			mu.Unlock()
		}
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := watchtools.UntilWithSync(wctx, lw, newOf[T](), func(store cache.Store) (bool, error) {
		items := store.List()
		for _, it := range items {
			note(it.(runtime.Object))
		}
		return len(items) == 0, nil
	}, func(e watch.Event) (bool, error) {
		note(e.Object)
		return e.Type == watch.Deleted, nil
	})
	if err != nil {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() != nil {
			return false, fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		}
		return false, &TimeoutError{What: what, Timeout: timeout, LastSeen: lastSeen, Err: err}
	}
	return true, nil
}
