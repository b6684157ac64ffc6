// Package observe waits for cluster state through watches, never through
// sleeps: every wait names what it awaits, has an explicit timeout, and on
// failure says what it saw last.
package observe

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
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

// Gone waits until no object is listed through lw any more: one object
// selected by name, or every object a label selector matches. On a timeout
// the error describes what was still listed.
func Gone[T runtime.Object](ctx context.Context, timeout time.Duration, what string, lw cache.ListerWatcher, describe func(T) string) (bool, error) {
	var (
		mu    sync.Mutex
		store cache.Store
	)
	empty := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(store.List()) == 0
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The informer updates its store before it emits the event, so the
	// store is at least as new as the event being looked at.
	_, err := watchtools.UntilWithSync(wctx, lw, newOf[T](), func(s cache.Store) (bool, error) {
		mu.Lock()
		store = s
		mu.Unlock()
		return empty(), nil
	}, func(watch.Event) (bool, error) {
		return empty(), nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return false, fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		}
		var left []string
		mu.Lock()
		if store != nil {
			for _, it := range store.List() {
				if o, ok := it.(T); ok && describe != nil {
					left = append(left, describe(o))
				}
			}
		}
		mu.Unlock()
		sort.Strings(left)
		return false, &TimeoutError{What: what, Timeout: timeout, LastSeen: strings.Join(left, "; "), Err: err}
	}
	return true, nil
}
