package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kubeproof/kubeproof/contract/testapp"
)

// processStart is when this process started: signal lines count from it.
var processStart = time.Now()

// caughtSignals are the signals recorded. Not all: the Go runtime uses
// SIGURG itself, and SIGCHLD or SIGWINCH say nothing about a Pod's life.
var caughtSignals = []os.Signal{
	syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2,
}

// isTerm: the signals that ask the process to end (the kubelet's is
// SIGTERM, unless the image or the Pod names another stop signal).
func isTerm(s os.Signal) bool { return s == syscall.SIGTERM || s == syscall.SIGINT }

// signalName is "SIGTERM", not Go's "terminated": the name a manifest and
// a document use.
func signalName(s os.Signal) string {
	if sig, ok := s.(syscall.Signal); ok {
		if name := unix.SignalName(sig); name != "" {
			return name
		}
	}
	return s.String()
}

// watchSignals records each caught signal as "signal SIGTERM +12ms". term
// is closed on the first SIGTERM or SIGINT; the others are only recorded
// (without a handler SIGHUP, SIGUSR1 and SIGUSR2 would end the process,
// and a check would see a crash instead of which signal came). stop ends
// the watch once every signal received so far is recorded, so that the
// "exit" line is the last.
func watchSignals(log *termLog) (term <-chan struct{}, stop func()) {
	sigc := make(chan os.Signal, 16)
	termc := make(chan struct{})
	var once sync.Once
	done := make(chan struct{})
	signal.Notify(sigc, caughtSignals...)
	go func() {
		defer close(done)
		for s := range sigc {
			log.record(testapp.SignalLine(signalName(s), time.Since(processStart)))
			if isTerm(s) {
				once.Do(func() { close(termc) })
			}
		}
	}()
	var stopOnce sync.Once
	return termc, func() {
		stopOnce.Do(func() {
			// After Stop returns nothing more is sent on sigc, so it can
			// be closed; what is buffered is still recorded.
			signal.Stop(sigc)
			close(sigc)
			<-done
		})
	}
}

// onTerm is what serve does on SIGTERM or SIGINT.
type onTerm struct {
	// kind is "exit", "ignore" or "delay".
	kind string
	// delay is how long it keeps serving for "delay".
	delay time.Duration
}

func (o onTerm) String() string {
	if o.kind == "delay" {
		return "delay=" + o.delay.String()
	}
	return o.kind
}

func (o *onTerm) Set(v string) error {
	switch {
	case v == "exit" || v == "ignore":
		*o = onTerm{kind: v}
	case strings.HasPrefix(v, "delay="):
		d, err := time.ParseDuration(strings.TrimPrefix(v, "delay="))
		if err != nil || d < 0 {
			return errors.New("want delay=DURATION, e.g. delay=10s")
		}
		*o = onTerm{kind: "delay", delay: d}
	default:
		return errors.New("want exit, ignore or delay=DURATION")
	}
	return nil
}

// exitMode is `kubeproof-testapp exit [--code N] [--after D]`: for init
// containers and crash loops. It returns the code to exit with.
// SIGTERM or SIGINT end the wait early (recorded, as every signal), so that
// deleting the Pod does not wait for the grace period; the code is N all
// the same.
func exitMode(args []string, log *termLog) (int, error) {
	fs := flag.NewFlagSet("exit", flag.ContinueOnError)
	code := fs.Int("code", 0, "exit code (0-255)")
	after := fs.Duration("after", 0, "how long to wait before exiting")
	if err := fs.Parse(args); err != nil {
		return 1, err
	}
	if fs.NArg() != 0 {
		return 1, fmt.Errorf("exit takes no arguments, got %q", fs.Args())
	}
	if *code < 0 || *code > 255 {
		return 1, fmt.Errorf("--code %d: an exit code is 0-255", *code)
	}
	if *after > 0 {
		term, stop := watchSignals(log)
		// After the watch is set up: a test sends its signal once it
		// reads this.
		fmt.Fprintf(log.stderr, "%s: exit %d in %s\n", AppName, *code, *after)
		timer := time.NewTimer(*after)
		select {
		case <-timer.C:
		case <-term:
			timer.Stop()
		}
		stop()
	}
	return *code, nil
}

// noteMode is `kubeproof-testapp note [--after D] TEXT...`: for exec
// lifecycle hooks (postStart, preStop), which run as other processes in
// the container and write the same file. --after makes a hook that takes
// time (a preStop hook's time counts against the grace period).
func noteMode(args []string, log *termLog) error {
	fs := flag.NewFlagSet("note", flag.ContinueOnError)
	after := fs.Duration("after", 0, "how long to wait before writing the note")
	if err := fs.Parse(args); err != nil {
		return err
	}
	text := testapp.OneLine(strings.Join(fs.Args(), " "))
	if text == "" {
		return errors.New("note needs a text, e.g. `note prestop`")
	}
	if *after > 0 {
		time.Sleep(*after)
	}
	log.record(testapp.NoteLine(text, time.Now()))
	return nil
}
