package testapp

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The termination log: what kubeproof-testapp's serve, exit and note modes
// write to the container's terminationMessagePath, one line per event,
// and the kubelet copies into the container's terminated state. The
// program writes it with the Line functions and a spec reads it with
// ParseTermLog, so the two cannot drift apart.

// Kinds of termination log lines.
const (
	KindStart  = "start"  // serve started: "start @<unix ms>"
	KindSignal = "signal" // a signal received: "signal SIGTERM +<ms since start>ms"
	KindNote   = "note"   // a hook's trace: "note TEXT @<unix ms>"
	KindError  = "error"  // why the process failed: "error TEXT"
	KindExit   = "exit"   // the last line: "exit N"
)

// Event is one line of the termination log.
type Event struct {
	Kind string `json:"kind"`
	// Signal is the signal's name (SIGTERM) of a signal line.
	Signal string `json:"signal,omitempty"`
	// Text is a note's or an error's text.
	Text string `json:"text,omitempty"`
	// At is the wall clock of a start or note line (milliseconds): hooks
	// are other processes, so only the wall clock is common to them.
	At time.Time `json:"at,omitzero"`
	// SinceStart is when a signal came, counted from the start of the
	// process that received it (milliseconds).
	SinceStart time.Duration `json:"sinceStart,omitempty"`
	// Code is an exit line's exit code.
	Code int `json:"code,omitempty"`
}

// StartLine is "start @<unix ms>".
func StartLine(at time.Time) string { return KindStart + " " + unixMillis(at) }

// SignalLine is "signal SIGTERM +12ms".
func SignalLine(name string, sinceStart time.Duration) string {
	return fmt.Sprintf("%s %s +%dms", KindSignal, name, sinceStart.Milliseconds())
}

// NoteLine is "note TEXT @<unix ms>"; white space in text, a newline
// included, becomes one space, so that a note is one line.
func NoteLine(text string, at time.Time) string {
	return KindNote + " " + OneLine(text) + " " + unixMillis(at)
}

// ErrorLine is "error TEXT" on one line.
func ErrorLine(text string) string { return OneLine(KindError + " " + text) }

// ExitLine is "exit N".
func ExitLine(code int) string { return KindExit + " " + strconv.Itoa(code) }

// OneLine joins text's words with single spaces.
func OneLine(text string) string { return strings.Join(strings.Fields(text), " ") }

func unixMillis(t time.Time) string { return "@" + strconv.FormatInt(t.UnixMilli(), 10) }

// ParseTermLog reads a termination message written by the test app. A line
// it does not know is an error naming it: a message cut by the kubelet (a
// Pod of more than three containers gets less than 4096 bytes each), or
// one another program wrote.
func ParseTermLog(message string) ([]Event, error) {
	var events []Event
	for i, line := range strings.Split(strings.TrimSuffix(message, "\n"), "\n") {
		if line == "" && i == 0 {
			continue // an empty message
		}
		ev, err := parseLine(line)
		if err != nil {
			return events, fmt.Errorf("termination log line %d %q: %w", i+1, line, err)
		}
		events = append(events, ev)
	}
	return events, nil
}

func parseLine(line string) (Event, error) {
	kind, rest, _ := strings.Cut(line, " ")
	switch kind {
	case KindStart:
		at, err := parseAt(rest)
		return Event{Kind: kind, At: at}, err
	case KindSignal:
		name, since, ok := strings.Cut(rest, " +")
		ms, err := strconv.ParseInt(strings.TrimSuffix(since, "ms"), 10, 64)
		if !ok || !strings.HasSuffix(since, "ms") || err != nil || name == "" {
			return Event{}, fmt.Errorf("want %q", "signal NAME +<ms>ms")
		}
		return Event{Kind: kind, Signal: name, SinceStart: time.Duration(ms) * time.Millisecond}, nil
	case KindNote:
		i := strings.LastIndex(rest, " @")
		if i <= 0 {
			return Event{}, fmt.Errorf("want %q", "note TEXT @<unix ms>")
		}
		at, err := parseAt(rest[i+1:])
		return Event{Kind: kind, Text: rest[:i], At: at}, err
	case KindError:
		return Event{Kind: kind, Text: rest}, nil
	case KindExit:
		code, err := strconv.Atoi(rest)
		if err != nil {
			return Event{}, fmt.Errorf("exit code: %w", err)
		}
		return Event{Kind: kind, Code: code}, nil
	}
	return Event{}, fmt.Errorf("unknown kind %q", kind)
}

func parseAt(s string) (time.Time, error) {
	ms, err := strconv.ParseInt(strings.TrimPrefix(s, "@"), 10, 64)
	if err != nil || !strings.HasPrefix(s, "@") {
		return time.Time{}, fmt.Errorf("want @<unix ms>, got %q", s)
	}
	return time.UnixMilli(ms), nil
}
