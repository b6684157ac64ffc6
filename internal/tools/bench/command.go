package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/runner"
)

// commandBench is a whole command (make run) timed as a user runs it: warm
// every round, and, with --cold, once more on empty caches.
type commandBench struct {
	Command string `json:"command"`
	// Name is what bench.md calls it (--end-to-end-name).
	Name string         `json:"name"`
	Warm []commandRound `json:"warm,omitempty"`
	// Cold is one run with kubeproof's cache and Go's build cache new and
	// empty: everything kubeproof builds is built again.
	Cold *commandRound `json:"cold,omitempty"`
}

type commandRound struct {
	WallMs   float64 `json:"wallMs"`
	ExitCode int     `json:"exitCode"`
	// Log holds the command's output.
	Log string `json:"log"`
}

// commandGrace is how long a timed command has to end after an interrupt:
// it is a whole run, which interrupts its specs and removes its cluster.
const commandGrace = 2 * time.Minute

// coldEnv are the environment variables that point the command at empty
// caches under dir: kubeproof's (built binaries and images) and Go's build
// cache (so that Kubernetes is compiled, not linked from earlier work). Go's
// module cache is kept: what it holds is downloads, whose time is the
// proxy's, not kubeproof's.
func coldEnv(dir string) []string {
	return []string{
		"KUBEPROOF_CACHE_DIR=" + filepath.Join(dir, "kubeproof"),
		"GOCACHE=" + filepath.Join(dir, "go-build"),
	}
}

// timeCommand runs command in a shell with env added, its output in logPath,
// and times it. A command that exits non-zero is still a measurement (the
// exit code says so); only an interrupt or a command that cannot start is
// an error.
func timeCommand(ctx context.Context, pr *progress.Printer, what, command, logPath string, env []string) (commandRound, error) {
	r := commandRound{Log: logPath}
	log, err := os.Create(logPath)
	if err != nil {
		return r, fmt.Errorf("create the log of %q: %w", command, err)
	}
	defer log.Close()
	child := &exec.Cmd{
		Path: "/bin/sh",
		Args: []string{"sh", "-c", command},
		Env:  append(os.Environ(), env...),
		// The file itself, not a pipe: a process the command leaves
		// behind holding its output must not keep the wait from ending.
		Stdout: log,
		Stderr: log,
		// Its own process group: an interrupt reaches it through
		// runner.WaitInterruptible, once, and it gets to clean up.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	done := pr.Step("%s: %s (output in %s)", what, command, logPath)
	stop := pr.Ticker(time.Minute, what, func() string { return lastLine(logPath) })
	begin := time.Now()
	if err := child.Start(); err != nil {
		stop()
		done(err)
		return r, fmt.Errorf("start %q: %w", command, err)
	}
	err = runner.WaitInterruptible(ctx, child, commandGrace)
	r.WallMs = framework.Millis(time.Since(begin))
	stop()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		done(ctx.Err())
		return r, fmt.Errorf("%s: %w", what, ctx.Err())
	case errors.As(err, &ee):
		r.ExitCode = ee.ExitCode()
		done(fmt.Errorf("exit code %d (see %s)", r.ExitCode, logPath))
	case err != nil:
		done(err)
		return r, fmt.Errorf("%s: %w", what, err)
	default:
		done(nil)
	}
	return r, nil
}

// timeEndToEnd times b.EndToEnd whole: --rounds times as the machine is
// (warm, after the providers' rounds), then with --cold once on empty caches
// under out, removed afterwards.
func timeEndToEnd(ctx context.Context, b Plan, out string) (commandBench, error) {
	eb := commandBench{Command: b.EndToEnd, Name: cmp.Or(b.EndToEndName, b.EndToEnd)}
	pr := runner.Printer()
	for i := range b.Rounds {
		r, err := timeCommand(ctx, pr, fmt.Sprintf("end to end, warm, round %d of %d", i+1, b.Rounds), b.EndToEnd,
			filepath.Join(out, fmt.Sprintf("end-to-end-warm-%d.log", i+1)), nil)
		if err != nil {
			return eb, err
		}
		eb.Warm = append(eb.Warm, r)
	}
	if !b.Cold {
		return eb, nil
	}
	caches := filepath.Join(out, "cold-caches")
	if err := os.RemoveAll(caches); err != nil {
		return eb, fmt.Errorf("empty the cold caches: %w", err)
	}
	defer os.RemoveAll(caches)
	r, err := timeCommand(ctx, pr, "end to end, cold (empty caches)", b.EndToEnd, filepath.Join(out, "end-to-end-cold.log"), coldEnv(caches))
	if err != nil {
		return eb, err
	}
	eb.Cold = &r
	return eb, nil
}

// lastLine is the last line of the log at path, shortened, for the progress
// ticker.
func lastLine(path string) string {
	data, _ := os.ReadFile(path) // a log not written yet has no last line
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	line := strings.TrimSpace(lines[len(lines)-1])
	const most = 120
	if len(line) > most {
		line = line[:most] + "…"
	}
	if line == "" {
		return ""
	}
	return "last line: " + line
}
