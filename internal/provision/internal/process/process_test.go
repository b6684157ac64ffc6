package process

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestStartStop(t *testing.T) {
	log := filepath.Join(t.TempDir(), "sleep.log")
	p, err := Start("sleeper", []string{"sleep", "300"}, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Alive() {
		t.Fatal("just started, not alive")
	}
	// A record of a process that reused the PID is not the process.
	impostor := p.Record
	impostor.StartTime++
	if impostor.Alive() {
		t.Fatal("a record with another start time matched")
	}
	if err := p.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("Exited not closed after Stop")
	}
	if p.Alive() {
		t.Fatal("alive after Stop")
	}
	if err := p.Stop(time.Second); err != nil {
		t.Fatalf("stopping a stopped process: %v", err)
	}
}

// A process that ignores SIGTERM is killed after the grace period.
func TestStopEscalates(t *testing.T) {
	log := filepath.Join(t.TempDir(), "stubborn.log")
	p, err := Start("stubborn", []string{"sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"}, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	if err := p.Stop(300 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if p.Alive() {
		t.Fatal("still alive")
	}
	if d := time.Since(begin); d > 8*time.Second {
		t.Fatalf("took %s", d)
	}
}

func TestFind(t *testing.T) {
	p, err := Start("finder", []string{"sleep", "301"}, filepath.Join(t.TempDir(), "f.log"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Stop(time.Second) }()
	pids := Find(func(args []string) bool { return len(args) == 2 && args[0] == "sleep" && args[1] == "301" })
	if !slices.Contains(pids, p.PID) {
		t.Fatalf("Find = %v, want it to contain %d", pids, p.PID)
	}
}

func TestTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	if err := os.WriteFile(path, []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Tail(path, 2); got != "two\nthree" {
		t.Fatalf("Tail = %q", got)
	}
	if got := Tail(filepath.Join(t.TempDir(), "missing"), 2); got != "" {
		t.Fatalf("Tail of a missing file = %q", got)
	}
}

// The variables given on top of kubeproof's environment reach the process,
// win over kubeproof's own, and are recorded for a restart.
func TestStartEnv(t *testing.T) {
	t.Setenv("KUBEPROOF_TEST_VAR", "outer")
	out := filepath.Join(t.TempDir(), "env.out")
	env := []string{"KUBEPROOF_TEST_VAR=inner"}
	p, err := Start("env", []string{"sh", "-c", `printf %s "$KUBEPROOF_TEST_VAR" > ` + out}, filepath.Join(t.TempDir(), "env.log"), env)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("sh did not exit")
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "inner" || !slices.Equal(p.Env, env) {
		t.Errorf("the process saw %q, the record holds %v: want %q and %v", got, p.Env, "inner", env)
	}
}
