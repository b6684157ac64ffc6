package progress

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A step is announced, then reported done or failed with its duration and
// error, each on a line of its own.
func TestStep(t *testing.T) {
	var b bytes.Buffer
	p := New(&b)
	done := p.Step("starting %s", "etcd")
	if d := done(nil); d < 0 {
		t.Errorf("duration %s", d)
	}
	p.Step("starting kubelet")(errors.New("exit status 1"))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := []*regexp.Regexp{
		regexp.MustCompile(`^ • starting etcd \.\.\.$`),
		regexp.MustCompile(`^ ✓ starting etcd \(\d+(\.\d+)?[µnm]?s\)$`),
		regexp.MustCompile(`^ • starting kubelet \.\.\.$`),
		regexp.MustCompile(`^ ✗ starting kubelet failed after \d+(\.\d+)?[µnm]?s: exit status 1$`),
	}
	if len(lines) != len(want) {
		t.Fatalf("lines %q", lines)
	}
	for i, re := range want {
		if !re.MatchString(lines[i]) {
			t.Errorf("line %d %q does not match %s", i, lines[i], re)
		}
	}
}

// The ticker says what is still going on until it is stopped, with the
// detail it is given; stopping twice is harmless.
func TestTicker(t *testing.T) {
	w := &lineWriter{lines: make(chan string, 100)}
	p := New(w)
	stop := p.Ticker(time.Millisecond, "waiting for the node", func() string { return "NotReady" })
	defer stop()
	select {
	case line := <-w.lines:
		if !regexp.MustCompile(`^ • still waiting for the node: \S+ elapsed, NotReady\n$`).MatchString(line) {
			t.Errorf("ticker printed %q", line)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the ticker printed nothing in 10s")
	}
	stop()
	stop()
}

// lineWriter hands each write to the test.
type lineWriter struct{ lines chan string }

func (w *lineWriter) Write(b []byte) (int, error) {
	select {
	case w.lines <- string(b):
	default:
	}
	return len(b), nil
}

func TestRound(t *testing.T) {
	for d, want := range map[time.Duration]string{
		1234567 * time.Microsecond:              "1.235s",
		12345 * time.Millisecond:                "12.3s",
		(2*time.Minute + 1600*time.Millisecond): "2m2s",
	} {
		if got := Round(d).String(); got != want {
			t.Errorf("Round(%s) = %s, want %s", d, got, want)
		}
	}
	if Discard().Writer() == nil {
		t.Error("Discard has no writer")
	}
}
