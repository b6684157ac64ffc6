package testapp

import (
	"reflect"
	"testing"
	"time"
)

// What the Line functions write, ParseTermLog reads back.
func TestTermLogRoundTrip(t *testing.T) {
	at := time.UnixMilli(1764201600123)
	msg := StartLine(at) + "\n" +
		NoteLine("post\nstart  hook", at.Add(8*time.Millisecond)) + "\n" +
		SignalLine("SIGTERM", 5012*time.Millisecond+400*time.Microsecond) + "\n" +
		NoteLine("a @ b", at) + "\n" +
		ErrorLine("listen on :8080:\naddress in use") + "\n" +
		ExitLine(137) + "\n"
	got, err := ParseTermLog(msg)
	if err != nil {
		t.Fatalf("%v in %q", err, msg)
	}
	want := []Event{
		{Kind: KindStart, At: at},
		{Kind: KindNote, Text: "post start hook", At: at.Add(8 * time.Millisecond)},
		{Kind: KindSignal, Signal: "SIGTERM", SinceStart: 5012 * time.Millisecond},
		{Kind: KindNote, Text: "a @ b", At: at},
		{Kind: KindError, Text: "listen on :8080: address in use"},
		{Kind: KindExit, Code: 137},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parsed %q:\n got %+v\nwant %+v", msg, got, want)
	}
	if ev, err := ParseTermLog(""); err != nil || len(ev) != 0 {
		t.Fatalf("empty message: %v, %v", ev, err)
	}
}

// A message cut by the kubelet, or written by another program, is an error
// naming the line, with the events before it.
func TestTermLogRejectsUnknownLines(t *testing.T) {
	for _, msg := range []string{
		"start @1\nexi",
		"start @1\nsignal SIGTERM 12ms",
		"start @1\nnote prestop",
		"start @1\nSleep expired",
		"start @1\nexit ",
	} {
		ev, err := ParseTermLog(msg)
		if err == nil {
			t.Errorf("%q: no error", msg)
			continue
		}
		if len(ev) != 1 || ev[0].Kind != KindStart {
			t.Errorf("%q: events before the bad line %+v", msg, ev)
		}
	}
}
