//go:build e2e

package runner_test

// The interrupt test runs the real kubeproof binary (make build) against a
// local cluster of its own and stops it while its specs run: with SIGINT,
// SIGTERM, two SIGINTs, and SIGKILL followed by `kubeproof down`. It needs
// root and the warm cache, like `make e2e`. It lives beside what it checks,
// the engine's interrupt handling (interrupt.go, specprocess.go), and
// drives it through the binary, as a user's Ctrl-C does (make interrupt):
//
//	go test -tags e2e -count=1 -run TestInterrupt -v ./internal/runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kubeproof/kubeproof/internal/provision"
	"github.com/kubeproof/kubeproof/internal/report"
)

// The test's cluster, beside any other on the machine.
const (
	testCluster = "kp-interrupt"
	// exitWithin is how soon after the signal a run must have ended,
	// cluster removed.
	exitWithin = 10 * time.Second
)

var clusterFlags = []string{"--name", testCluster, "--apiserver-port", "7443", "--pod-cidr", "10.245.0.0/16", "--service-cidr", "10.97.0.0/16"}

func kubeproofBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("KUBEPROOF_BIN")
	if bin == "" {
		bin = "../../_output/bin/kubeproof"
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("no kubeproof binary at %s (make build, or set KUBEPROOF_BIN): %v", abs, err)
	}
	return abs
}

// output is a run's output, written and read by different goroutines.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// started is a `kubeproof run` that has got as far as its specs.
type started struct {
	cmd    *exec.Cmd
	output *output
	report string
	exited chan error
}

// startRun starts `kubeproof run` and returns once a spec has finished (the
// first "•" of Ginkgo's progress), so the signal lands while specs run.
func startRun(t *testing.T) *started {
	t.Helper()
	dir := t.TempDir()
	args := append([]string{"run", "--parallel", "4", "--report-dir", dir}, clusterFlags...)
	cmd := exec.Command(kubeproofBin(t), args...)
	out := &output{}
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &started{cmd: cmd, output: out, report: dir, exited: make(chan error, 1)}
	specs := make(chan struct{})
	go func() {
		buf := make([]byte, 4096)
		seen := false
		stdout := &output{}
		for {
			n, err := pipe.Read(buf)
			_, _ = out.Write(buf[:n])
			_, _ = stdout.Write(buf[:n])
			// Ginkgo prints a • on standard output for every spec that
			// finished (no newline until the last); kubeproof's own
			// progress lines, also with a •, go to standard error.
			if !seen && strings.Contains(stdout.String(), "•") {
				seen = true
				close(specs)
			}
			if err != nil {
				break
			}
		}
		s.exited <- cmd.Wait()
	}()
	select {
	case <-specs:
	case err := <-s.exited:
		t.Fatalf("kubeproof run ended before its specs ran: %v\n%s", err, out)
	case <-time.After(5 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("no spec finished within 5 minutes:\n%s", out)
	}
	return s
}

// stop sends sig (count times) and returns the exit code and how long the
// run took to end after the first signal.
func (s *started) stop(t *testing.T, sig syscall.Signal, count int) (int, time.Duration) {
	t.Helper()
	sent := time.Now()
	for i := 0; i < count; i++ {
		if err := s.cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		if i+1 < count {
			// The second signal of a double Ctrl-C, once the first has
			// been taken: the run says so on its output.
			waitFor(t, s.output, "stopping;", 5*time.Second)
		}
	}
	select {
	case err := <-s.exited:
		took := time.Since(sent)
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return code, took
	case <-time.After(2 * time.Minute):
		_ = s.cmd.Process.Kill()
		t.Fatalf("kubeproof did not end within 2 minutes of %s:\n%s", sig, s.output)
	}
	return 0, 0
}

func waitFor(t *testing.T, out *output, text string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(out.String(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("%q did not appear within %s:\n%s", text, within, out)
		}
		time.Sleep(50 * time.Millisecond) // reading another process's output
	}
}

// leftovers lists what the test cluster left on the machine.
func leftovers(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, p := range append(provision.LocalClusterDirs(testCluster), "/run/netns/kubeproof-"+testCluster) {
		if _, err := os.Stat(p); err == nil {
			out = append(out, "path "+p)
		}
	}
	mounts, _ := os.ReadFile("/proc/mounts")
	for _, l := range strings.Split(string(mounts), "\n") {
		if strings.Contains(l, testCluster) {
			out = append(out, "mount "+l)
		}
	}
	ps, _ := exec.Command("ps", "-eo", "pid,args").Output()
	for _, l := range strings.Split(string(ps), "\n") {
		if strings.Contains(l, testCluster) || strings.Contains(l, "kubeproof-specs.test") || strings.Contains(l, "kubeproof-ginkgo") {
			out = append(out, "process "+strings.TrimSpace(l))
		}
	}
	if _, err := os.Stat("/sys/class/net/kp-" + testCluster); err == nil {
		out = append(out, "link kp-"+testCluster)
	}
	for _, c := range []string{"/sys/fs/cgroup/memory/kubeproof-" + testCluster, "/sys/fs/cgroup/unified/kubeproof-" + testCluster} {
		if _, err := os.Stat(c); err == nil {
			out = append(out, "cgroup "+c)
		}
	}
	return out
}

// iptablesRules is the host's iptables rules without their counters.
func iptablesRules(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("iptables-save").Output()
	if err != nil {
		t.Fatalf("iptables-save: %v", err)
	}
	var keep []string
	counters := regexp.MustCompile(`\[\d+:\d+\]`)
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		keep = append(keep, counters.ReplaceAllString(l, ""))
	}
	return strings.Join(keep, "\n")
}

func readReport(t *testing.T, dir string) report.Report {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "claims.json"))
	if err != nil {
		t.Fatalf("no partial report: %v", err)
	}
	var r report.Report
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestInterrupt(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the local provider needs root")
	}
	if l := leftovers(t); len(l) > 0 {
		t.Fatalf("the machine is not clean before the test: %v", l)
	}
	rules := iptablesRules(t)
	clean := func(t *testing.T) {
		t.Helper()
		if l := leftovers(t); len(l) > 0 {
			t.Errorf("left behind: %v", l)
		}
		if got := iptablesRules(t); got != rules {
			t.Errorf("the host's iptables rules changed")
		}
	}

	for _, tc := range []struct {
		name   string
		sig    syscall.Signal
		count  int
		code   int
		report bool
	}{
		{"SIGINT", syscall.SIGINT, 1, 130, true},
		{"SIGTERM", syscall.SIGTERM, 1, 143, true},
		{"two SIGINTs skip the report", syscall.SIGINT, 2, 130, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startRun(t)
			code, took := s.stop(t, tc.sig, tc.count)
			t.Logf("%s: exit %d, %s after the signal", tc.name, code, took.Round(time.Millisecond))
			if code != tc.code {
				t.Errorf("exit code %d, want %d\n%s", code, tc.code, s.output)
			}
			if took > exitWithin {
				t.Errorf("ended %s after the signal, want within %s", took.Round(time.Millisecond), exitWithin)
			}
			_, err := os.Stat(filepath.Join(s.report, "claims.json"))
			if tc.report {
				r := readReport(t, s.report)
				if r.Partial == "" || r.Summary["not-run"] == 0 {
					t.Errorf("the report does not say it is partial: partial %q, summary %v", r.Partial, r.Summary)
				}
			} else if err == nil {
				t.Errorf("a second signal must skip the report, but claims.json was written")
			}
			clean(t)
		})
	}

	t.Run("SIGKILL, then kubeproof down", func(t *testing.T) {
		s := startRun(t)
		if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if err := <-s.exited; err == nil {
			t.Fatal("a run killed with SIGKILL exited as if it had finished")
		}
		left := leftovers(t)
		if len(left) == 0 {
			t.Fatal("a killed run left nothing: the test did not kill it in time")
		}
		// The cluster's registry outlives the killed run (it runs on its
		// own, like the control plane): down must find and stop it.
		if !slices.ContainsFunc(left, func(l string) bool { return strings.Contains(l, "registry serve") }) {
			t.Errorf("the killed run's cluster has no registry running: %v", left)
		}
		down := exec.Command(kubeproofBin(t), append([]string{"down"}, clusterFlags[:2]...)...)
		out, err := down.CombinedOutput()
		t.Logf("kubeproof down: %s", out)
		if err != nil {
			t.Fatalf("kubeproof down: %v", err)
		}
		if !strings.Contains(string(out), "was left by kubeproof") {
			t.Errorf("kubeproof down did not say it found a killed run's cluster:\n%s", out)
		}
		clean(t)
	})
	fmt.Fprintln(os.Stderr, "interrupt test done")
}
