// Package process starts long-running programs detached from the terminal
// (so they outlive `kubeproof up` and a Ctrl-C aimed at it), identifies them
// again later from a saved Record, and stops them. Waiting for a process to end
// uses a pidfd, not a polling loop.
package process

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Record identifies a started process across kubeproof invocations. The start
// time guards against a recycled PID: a Record never matches a different
// process that happens to reuse the number.
type Record struct {
	Name      string   `json:"name"`
	PID       int      `json:"pid"`
	StartTime uint64   `json:"startTime"`
	Args      []string `json:"args"`
	// Env holds the variables it was given on top of kubeproof's own
	// environment, so that a restart gives them again.
	Env []string `json:"env,omitempty"`
	Log string   `json:"log"`
}

// Proc is a process started by this kubeproof invocation.
type Proc struct {
	Record
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
}

// Exited is closed when the process ends while we are its parent.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// Err is the process's exit error once Exited is closed.
func (p *Proc) Err() error { return p.err }

// Start runs args (args[0] is the program) in a new session, with stdin from
// /dev/null, stdout and stderr appended to logPath, and kubeproof's
// environment plus env (whose variables win).
func Start(name string, args []string, logPath string, env []string) (*Proc, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("start %s: no command", name)
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, fmt.Errorf("start %s: create log directory: %w", name, err)
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s: open log: %w", name, err)
	}
	defer logf.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.Env = append(os.Environ(), env...)
	// A new session: the terminal's Ctrl-C reaches kubeproof, which then
	// decides what to stop, instead of killing components half-way.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	// The child is not reaped before cmd.Wait, so its stat is there even
	// when it has already exited (a short command on a fast machine): its
	// start time is read as a zombie's too.
	st, err := readStartTime(cmd.Process.Pid, true)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Proc{
		Record: Record{Name: name, PID: cmd.Process.Pid, StartTime: st, Args: args, Env: env, Log: logPath},
		cmd:    cmd,
		exited: make(chan struct{}),
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Alive reports whether the recorded process still runs.
func (r Record) Alive() bool {
	st, err := startTime(r.PID)
	return err == nil && st == r.StartTime
}

// Self is the running process, as a Record (so that others can tell later
// whether it still runs).
func Self(name string) Record {
	st, _ := startTime(os.Getpid())
	return Record{Name: name, PID: os.Getpid(), StartTime: st, Args: os.Args}
}

// Stop sends SIGTERM to the process (and its process group), waits up to
// grace for it to end, then sends SIGKILL and waits again. Stopping a process
// that is already gone is not an error.
func (r Record) Stop(grace time.Duration) error {
	if !r.Alive() {
		return nil
	}
	return Terminate(r.PID, grace)
}

// Terminate stops pid as Stop does, without the identity check. With no
// grace (grace <= 0) it sends SIGKILL alone.
func Terminate(pid int, grace time.Duration) error {
	return withPidfd(pid, func(fd int) error {
		if grace <= 0 {
			return killAndWait(pid, fd, 10*time.Second)
		}
		signal(pid, syscall.SIGTERM)
		if waitFD(fd, grace) {
			return nil
		}
		return killAndWait(pid, fd, 10*time.Second)
	})
}

// Kill sends SIGKILL and waits for the process to end.
func Kill(pid int, timeout time.Duration) error {
	return withPidfd(pid, func(fd int) error { return killAndWait(pid, fd, timeout) })
}

func killAndWait(pid, fd int, timeout time.Duration) error {
	_ = syscall.Kill(pid, syscall.SIGKILL)
	if waitFD(fd, timeout) {
		return nil
	}
	return fmt.Errorf("process %d did not exit %s after SIGKILL", pid, timeout)
}

// signal sends sig to the process group led by pid (our components lead their
// own session) and to pid itself, in case it moved to another group.
func signal(pid int, sig syscall.Signal) {
	if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
		_ = syscall.Kill(-pid, sig)
	}
	_ = syscall.Kill(pid, sig)
}

// startTime reads field 22 of /proc/PID/stat: the start time in clock ticks
// since boot. Zombies count as gone.
func startTime(pid int) (uint64, error) { return readStartTime(pid, false) }

// readStartTime is startTime; with zombies, the start time of a process that
// has exited but was not reaped yet is read too.
func readStartTime(pid int, zombies bool) (uint64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("process %d: %w", pid, err)
	}
	// The command name (field 2) may hold spaces; fields after it follow ')'.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, fmt.Errorf("process %d: malformed stat", pid)
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 20 {
		return 0, fmt.Errorf("process %d: short stat", pid)
	}
	if !zombies && (fields[0] == "Z" || fields[0] == "X") {
		return 0, fmt.Errorf("process %d: exited", pid)
	}
	return strconv.ParseUint(fields[19], 10, 64)
}

// Find returns the PIDs of processes whose command line satisfies match.
func Find(match func(args []string) bool) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if match(args) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Args returns the command line of pid.
func Args(pid int) ([]string, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00"), nil
}

// Tail returns the last n lines of a log file, for error messages.
func Tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
