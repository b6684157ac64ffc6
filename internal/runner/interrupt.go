package runner

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/kubeproof/kubeproof/internal/exitcode"
)

// Interrupts turns SIGINT and SIGTERM into a run's way out: the first
// cancels the command's context (builds, bring-up and waits stop; the spec
// runner is interrupted, so running specs clean up and the partial results
// are judged), the second also skips the report and kills the spec
// runner. Neither skips removing a cluster the command made: that runs on
// a context of its own (context.WithoutCancel).
type Interrupts struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	count  int
	first  os.Signal
	// hooks are told of every signal with how many came so far (the spec
	// runner passes them on to its process group).
	hooks []func(n int)
	stop  func()
}

// Stop stops catching signals (the command is done).
func (in *Interrupts) Stop() { in.stop() }

type interruptsKey struct{}

// InterruptsOf returns the handler main put in ctx (nil in tests).
func InterruptsOf(ctx context.Context) *Interrupts {
	in, _ := ctx.Value(interruptsKey{}).(*Interrupts)
	return in
}

// CatchInterrupts returns a context that ends at the first SIGINT or
// SIGTERM, and the handler that counts them.
func CatchInterrupts(parent context.Context) (context.Context, *Interrupts) {
	ctx, cancel := context.WithCancel(parent)
	in := &Interrupts{cancel: cancel}
	ctx = context.WithValue(ctx, interruptsKey{}, in)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	in.stop = func() {
		signal.Stop(sigs)
		close(done)
	}
	go func() {
		for {
			select {
			case s := <-sigs:
				in.signal(s)
			case <-done:
				return
			}
		}
	}()
	return ctx, in
}

func (in *Interrupts) signal(s os.Signal) {
	in.mu.Lock()
	in.count++
	n := in.count
	switch n {
	case 1:
		in.first = s
		Printer().Infof("%s: stopping; a cluster this command made is removed (a second one skips the report)", name(s))
	case 2:
		Printer().Infof("%s again: skipping the report; a cluster this command made is still removed", name(s))
	}
	hooks := append([]func(int){}, in.hooks...)
	in.mu.Unlock()
	in.cancel()
	for _, h := range hooks {
		h(n)
	}
}

func name(s os.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "interrupt"
}

// Raise acts as if signal s had come: a run inside the cluster is
// interrupted by the run that started it (run --in-cluster), which has no
// process to signal there.
func (in *Interrupts) Raise(s os.Signal) {
	if in != nil {
		in.signal(s)
	}
}

// Watch adds a hook told of every signal with how many came so far; the
// returned func removes it.
func (in *Interrupts) Watch(h func(n int)) func() { return in.watch(h) }

// watch adds a hook told of every signal; the returned func removes it.
func (in *Interrupts) watch(h func(n int)) func() {
	if in == nil {
		return func() {}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.hooks = append(in.hooks, h)
	i := len(in.hooks) - 1
	return func() {
		in.mu.Lock()
		defer in.mu.Unlock()
		in.hooks[i] = func(int) {}
	}
}

// SkipReport reports whether a second signal asked to skip the report.
func (in *Interrupts) SkipReport() bool {
	if in == nil {
		return false
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.count >= 2
}

// Interrupted reports whether a signal came.
func (in *Interrupts) Interrupted() bool {
	if in == nil {
		return false
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.count > 0
}

// Code is the exit code a signal gives: 130 for SIGINT, 143 for SIGTERM
// (128 + the signal's number, as shells do).
func (in *Interrupts) Code() exitcode.Code {
	if in == nil {
		return exitcode.Interrupted
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.first == syscall.SIGTERM {
		return exitcode.Terminated
	}
	return exitcode.Interrupted
}
