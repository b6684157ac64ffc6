// Package progress prints what a long-running step is doing, so that a user
// watching `kubeproof up` or a CI log sees each step start, finish and how
// long it took.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Printer writes one line per event. The zero value is not usable; use New.
type Printer struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

// New returns a Printer writing to w; nil means os.Stderr.
func New(w io.Writer) *Printer {
	if w == nil {
		w = os.Stderr
	}
	return &Printer{w: w, start: time.Now()}
}

// Discard is a Printer that prints nothing (for library users and tests).
func Discard() *Printer { return New(io.Discard) }

// Writer returns the underlying writer.
func (p *Printer) Writer() io.Writer { return p.w }

// Infof prints an informational line.
func (p *Printer) Infof(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, " • "+format+"\n", args...)
}

// Step announces a step and returns a function that reports its outcome.
// Call the returned function exactly once, with the step's error (nil for
// success). It returns the step's duration.
func (p *Printer) Step(format string, args ...any) func(err error) time.Duration {
	name := fmt.Sprintf(format, args...)
	begin := time.Now()
	p.Infof("%s ...", name)
	return func(err error) time.Duration {
		d := time.Since(begin)
		p.mu.Lock()
		defer p.mu.Unlock()
		if err != nil {
			fmt.Fprintf(p.w, " ✗ %s failed after %s: %v\n", name, Round(d), err)
		} else {
			fmt.Fprintf(p.w, " ✓ %s (%s)\n", name, Round(d))
		}
		return d
	}
}

// Ticker prints "still <what>: <elapsed>[, <detail>]" every interval until the
// returned stop function is called. detail may be nil.
func (p *Printer) Ticker(interval time.Duration, what string, detail func() string) (stop func()) {
	done := make(chan struct{})
	begin := time.Now()
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				extra := ""
				if detail != nil {
					if d := detail(); d != "" {
						extra = ", " + d
					}
				}
				p.Infof("still %s: %s elapsed%s", what, Round(time.Since(begin)), extra)
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }
}

// Round shortens a duration for humans: milliseconds below 10 s, tenths of a
// second below a minute, whole seconds above.
func Round(d time.Duration) time.Duration {
	switch {
	case d < 10*time.Second:
		return d.Round(time.Millisecond)
	case d < time.Minute:
		return d.Round(100 * time.Millisecond)
	default:
		return d.Round(time.Second)
	}
}
