package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kubeproof/kubeproof/contract/testapp"
)

// runMainEnv makes the test binary run main instead of the tests: the
// signal tests need the program as a process of its own, and re-running
// this binary avoids a `go build` per test run.
const runMainEnv = "KUBEPROOF_TESTAPP_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// tempLog is a termination log in t.TempDir (made by the first line, as
// $TERMINATION_LOG's is) whose stderr copy is dropped.
func tempLog(t *testing.T) *termLog {
	t.Helper()
	return &termLog{path: filepath.Join(t.TempDir(), "termination-log"), create: true, stderr: io.Discard}
}

func discardLog(t *testing.T) *termLog { return tempLog(t) }

// logLines reads the termination log's lines.
func logLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read termination log: %v", err)
	}
	if len(data) > TermLogLimit {
		t.Fatalf("termination log holds %d bytes, more than the kubelet reads (%d)", len(data), TermLogLimit)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Fatalf("termination log does not end with a whole line: %q", data)
	}
	// What the program writes, a spec reads back with the wire format.
	if _, err := testapp.ParseTermLog(string(data)); err != nil {
		t.Fatalf("the wire format does not read the log: %v", err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// expectLines checks lines against one regular expression each, in order.
func expectLines(t *testing.T, lines []string, want ...string) {
	t.Helper()
	if len(lines) != len(want) {
		t.Fatalf("termination log: %d lines %q, want %d matching %q", len(lines), lines, len(want), want)
	}
	for i, w := range want {
		if !regexp.MustCompile("^" + w + "$").MatchString(lines[i]) {
			t.Fatalf("termination log line %d: %q, want %q (all: %q)", i+1, lines[i], w, lines)
		}
	}
}

func get(t *testing.T, srv *httptest.Server, path string) (int, testapp.Identity) {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	var id testapp.Identity
	if err := json.NewDecoder(resp.Body).Decode(&id); err != nil {
		t.Fatalf("GET %s: decode: %v", path, err)
	}
	return resp.StatusCode, id
}

// probeStep sets the app's switches with control (when not empty), then
// expects path to answer want.
type probeStep struct {
	control string
	path    string
	want    int
	why     string
}

func expectProbes(t *testing.T, srv *httptest.Server, steps []probeStep) {
	t.Helper()
	for _, s := range steps {
		if s.control != "" {
			get(t, srv, "/control?"+s.control)
		}
		if code, _ := get(t, srv, s.path); code != s.want {
			t.Fatalf("%s %s: HTTP %d, want %d", s.path, s.why, code, s.want)
		}
	}
}

func TestProbesSwitchAtRuntime(t *testing.T) {
	srv := httptest.NewServer(newHandler(newState(true, true, 0), "10.244.0.9", discardLog(t)))
	defer srv.Close()

	if code, id := get(t, srv, "/"); code != 200 || id.App != AppName || id.PodIP != "10.244.0.9" {
		t.Fatalf("identity: HTTP %d %+v", code, id)
	}
	expectProbes(t, srv, []probeStep{
		{"", "/readyz", 200, "initially"},
		{"ready=false", "/readyz", 503, "after ready=false"},
		{"", "/healthz", 200, "after ready=false (liveness must not follow readiness)"},
		{"ready=true&healthy=false", "/readyz", 200, "after ready=true"},
		{"", "/healthz", 503, "after healthy=false"},
	})
	resp, err := http.Get(srv.URL + "/control?ready=maybe")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("bad control value: HTTP %d, want 400", resp.StatusCode)
	}
}

func TestStartupProbeFailsUntilStarted(t *testing.T) {
	st := newState(true, true, 1<<62) // never by itself
	srv := httptest.NewServer(newHandler(st, "", discardLog(t)))
	defer srv.Close()
	// Not alive before it has started (a liveness probe that ran now would
	// restart it), but ready is its own switch.
	expectProbes(t, srv, []probeStep{
		{"", "/startupz", 503, "before start"},
		{"", "/healthz", 503, "before start"},
		{"", "/readyz", 200, "before start"},
		{"started=true", "/startupz", 200, "after start"},
		{"", "/healthz", 200, "after start"},
	})
}

// An answer that is not ours must never count as a response: a packet that
// leaves the machine can be answered by anything.
func TestIdentifyRejectsUnknownResponders(t *testing.T) {
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Bad Request", http.StatusBadRequest)
	}))
	defer foreign.Close()
	if who, err := identify(http.DefaultClient, foreign.URL); err == nil {
		t.Fatalf("foreign responder identified as %q", responderName(who))
	}
	ours := httptest.NewServer(newHandler(newState(true, true, 0), "10.0.0.1", discardLog(t)))
	defer ours.Close()
	t.Setenv("POD_NAME", "web-1")
	if who, err := identify(http.DefaultClient, ours.URL); err != nil || responderName(who) != "web-1" {
		t.Fatalf("identify ours: %q, %v", responderName(who), err)
	}
}

// Many writers at once (hooks and the main process are other processes;
// here each append opens the file anew, as they do): every line whole, the
// file never longer than the kubelet reads, and the exit line still fits
// when notes have filled the rest.
func TestTermLogWholeLinesWithinLimit(t *testing.T) {
	log := tempLog(t)
	var mu sync.Mutex
	written, full := 0, 0
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				err := log.append(testapp.NoteLine(fmt.Sprintf("writer%d-%d", w, i), time.Now()))
				mu.Lock()
				switch {
				case err == nil:
					written++
				case errors.Is(err, errTermLogFull):
					full++
				default:
					t.Errorf("append: %v", err)
				}
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	if full == 0 {
		t.Fatalf("320 notes all fit in %d bytes: the limit was not reached", TermLogLimit)
	}
	if err := log.append(testapp.ExitLine(0)); err != nil {
		t.Fatalf("exit line after a full log: %v", err)
	}
	lines := logLines(t, log.path)
	if len(lines) != written+1 {
		t.Fatalf("%d lines in the log, %d notes written and an exit line", len(lines), written)
	}
	note := regexp.MustCompile(`^note writer\d+-\d+ @\d+$`)
	for _, l := range lines[:written] {
		if !note.MatchString(l) {
			t.Fatalf("line %q is not one whole note", l)
		}
	}
	if lines[written] != "exit 0" {
		t.Fatalf("last line %q, want exit 0", lines[written])
	}
}

// Outside a Pod there is no /dev/termination-log: nothing is created, the
// line goes to stderr with the reason, and the caller goes on.
func TestTermLogMissingDefaultIsNotCreated(t *testing.T) {
	var stderr strings.Builder
	log := &termLog{path: filepath.Join(t.TempDir(), "termination-log"), stderr: &stderr}
	log.record("start @1")
	if _, err := os.Stat(log.path); !os.IsNotExist(err) {
		t.Fatalf("the default path was created (stat: %v)", err)
	}
	if !strings.Contains(stderr.String(), "start @1") || !strings.Contains(stderr.String(), "line not recorded") {
		t.Fatalf("stderr: %q", stderr.String())
	}
}

func TestOnTermFlag(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"exit", "exit", true},
		{"ignore", "ignore", true},
		{"delay=1m30s", "delay=1m30s", true},
		{"delay=", "", false},
		{"delay=-1s", "", false},
		{"kill", "", false},
	} {
		var o onTerm
		err := o.Set(c.in)
		if (err == nil) != c.ok || (c.ok && o.String() != c.want) {
			t.Errorf("--on-term %s: %v, %v; want %q, ok %v", c.in, o, err, c.want, c.ok)
		}
	}
}

// The note mode (exec hooks) and the /note endpoint (httpGet hooks) write
// the same line; a text cannot make two lines.
func TestNotes(t *testing.T) {
	log := tempLog(t)
	if err := noteMode([]string{"poststart"}, log); err != nil {
		t.Fatal(err)
	}
	if err := noteMode(nil, log); err == nil {
		t.Fatal("note without a text: no error")
	}
	srv := httptest.NewServer(newHandler(newState(true, true, 0), "", log))
	defer srv.Close()
	for q, want := range map[string]int{"?text=pre%0Astop": 200, "": 400} {
		resp, err := http.Get(srv.URL + "/note" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("GET /note%s: HTTP %d, want %d", q, resp.StatusCode, want)
		}
	}
	expectLines(t, logLines(t, log.path), `note poststart @\d+`, `note pre stop @\d+`)
}

// app is the program run as its own process, with a termination log of its
// own and its stderr read line by line.
type app struct {
	cmd    *exec.Cmd
	log    string
	stderr chan string
	addr   string
}

func startApp(t *testing.T, args ...string) *app {
	t.Helper()
	a := &app{log: filepath.Join(t.TempDir(), "termination-log"), stderr: make(chan string, 100)}
	a.cmd = exec.Command(os.Args[0], args...)
	a.cmd.Env = append(os.Environ(), runMainEnv+"=1", "TERMINATION_LOG="+a.log)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	a.cmd.Stderr = w
	if err := a.cmd.Start(); err != nil {
		t.Fatalf("start %v: %v", args, err)
	}
	w.Close()
	t.Cleanup(func() {
		if a.cmd.ProcessState == nil {
			_ = a.cmd.Process.Kill()
			_ = a.cmd.Wait()
		}
	})
	go func() {
		defer close(a.stderr)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			a.stderr <- sc.Text()
		}
	}()
	return a
}

// waitFor returns the first stderr line that contains s.
func (a *app) waitFor(t *testing.T, s string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case line, ok := <-a.stderr:
			if !ok {
				t.Fatalf("the app ended before it wrote %q", s)
			}
			if strings.Contains(line, s) {
				return line
			}
		case <-timeout:
			t.Fatalf("no %q on the app's stderr in 10s", s)
		}
	}
}

// serving waits until the app serves (its signal handling is set up by
// then) and keeps its address.
func (a *app) serving(t *testing.T) {
	t.Helper()
	line := a.waitFor(t, "serving on ")
	a.addr = strings.Fields(strings.SplitN(line, "serving on ", 2)[1])[0]
}

func (a *app) signal(t *testing.T, s syscall.Signal) {
	t.Helper()
	if err := a.cmd.Process.Signal(s); err != nil {
		t.Fatalf("send %v: %v", s, err)
	}
	a.waitFor(t, "signal "+signalName(s)+" +")
}

// answers: the app still serves.
func (a *app) answers(t *testing.T) {
	t.Helper()
	resp, err := http.Get("http://" + a.addr + "/")
	if err != nil {
		t.Fatalf("the app does not answer: %v", err)
	}
	resp.Body.Close()
}

// exitCode waits for the app to end: its exit code, -1 if a signal
// ended it.
func (a *app) exitCode(t *testing.T) int {
	t.Helper()
	err := a.cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("wait: %v", err)
	}
	return a.cmd.ProcessState.ExitCode()
}

// The default: signals other than SIGTERM are recorded and served through;
// SIGTERM ends it with 0.
func TestServeRecordsSignalsThenExits(t *testing.T) {
	a := startApp(t, "serve", "--listen", "127.0.0.1:0")
	a.serving(t)
	a.signal(t, syscall.SIGHUP)
	a.signal(t, syscall.SIGUSR1)
	a.answers(t)
	a.signal(t, syscall.SIGTERM)
	if code := a.exitCode(t); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0", code)
	}
	expectLines(t, logLines(t, a.log), `start @\d+`, `signal SIGHUP \+\d+ms`, `signal SIGUSR1 \+\d+ms`,
		`signal SIGTERM \+\d+ms`, `exit 0`)
}

// --on-term=ignore keeps serving until SIGKILL, which leaves no exit line.
func TestServeOnTermIgnore(t *testing.T) {
	a := startApp(t, "serve", "--listen", "127.0.0.1:0", "--on-term", "ignore")
	a.serving(t)
	a.signal(t, syscall.SIGTERM)
	a.answers(t)
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if code := a.exitCode(t); code != -1 {
		t.Fatalf("exit code %d, want the end by SIGKILL", code)
	}
	expectLines(t, logLines(t, a.log), `start @\d+`, `signal SIGTERM \+\d+ms`)
}

// --on-term=delay=D serves D more after SIGTERM, then exits 0 by itself.
func TestServeOnTermDelay(t *testing.T) {
	const delay = time.Second
	a := startApp(t, "serve", "--listen", "127.0.0.1:0", "--on-term", "delay="+delay.String())
	a.serving(t)
	sent := time.Now()
	a.signal(t, syscall.SIGTERM)
	a.answers(t)
	if code := a.exitCode(t); code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	if took := time.Since(sent); took < delay {
		t.Fatalf("exited %v after SIGTERM, before the delay of %v", took, delay)
	}
	expectLines(t, logLines(t, a.log), `start @\d+`, `signal SIGTERM \+\d+ms`, `exit 0`)
}

func TestExitMode(t *testing.T) {
	a := startApp(t, "exit", "--code", "3")
	if code := a.exitCode(t); code != 3 {
		t.Fatalf("exit code %d, want 3", code)
	}
	expectLines(t, logLines(t, a.log), `exit 3`)

	// SIGTERM ends the wait (a deleted Pod does not wait out its grace
	// period); the code is the one asked for.
	a = startApp(t, "exit", "--code", "7", "--after", "1h")
	a.waitFor(t, "exit 7 in 1h0m0s")
	a.signal(t, syscall.SIGTERM)
	if code := a.exitCode(t); code != 7 {
		t.Fatalf("exit code %d, want 7", code)
	}
	expectLines(t, logLines(t, a.log), `signal SIGTERM \+\d+ms`, `exit 7`)
}

// A mistake in a manifest's args shows in the Pod's status.
func TestBadFlagIsInTheLog(t *testing.T) {
	a := startApp(t, "serve", "--on-term", "kill")
	if code := a.exitCode(t); code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
	expectLines(t, logLines(t, a.log), `error invalid value "kill" for flag -on-term: .*`, `exit 1`)
}
