//go:build linux

// Command cgroup2 runs a command on a cgroup v2 machine made for the
// occasion, a user-mode-linux guest of this one (package umlguest), and
// judges it by the kubeproof report the command left in the shared results
// directory: make e2e-cgroup2 runs `kubeproof run` there.
//
//	cgroup2 --results DIR [--report DIR | --no-report] [--systemd] [--memory 6G] [--timeout 40m] -- COMMAND [ARG...]
//
// With --no-report (a command that leaves no report, such as a test
// binary), the command's exit code as the guest recorded it decides.
//
// Exit codes: 0 the report's specs passed, 1 a spec failed (or the report
// is partial), 2 usage, 5 missing tool, 8 the guest did not run the command
// to its end, 130 interrupted; otherwise the command's own code when its
// report has no failure but it did not exit 0.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/kubeproof/kubeproof/ci/cgroup2/umlguest"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/report"
)

func main() {
	if umlguest.Guest() {
		return
	}
	os.Exit(int(run()))
}

func run() exitcode.Code {
	fs := flag.NewFlagSet("cgroup2", flag.ContinueOnError)
	results := fs.String("results", "", "host directory the guest shares: the command's exit code and the guest's description go there (required)")
	reportDir := fs.String("report", "", "the kubeproof report directory whose claims.json decides (default: RESULTS/report)")
	memory := fs.String("memory", "6G", "the guest's memory")
	timeout := fs.Duration("timeout", 40*time.Minute, "the guest's whole life at most")
	noReport := fs.Bool("no-report", false, "the command leaves no report: its exit code, as the guest recorded it, decides")
	systemd := fs.Bool("systemd", false, "boot systemd as the guest's PID 1 and run the command as its service (a machine systemd booted)")
	var scratch []string
	fs.Func("scratch", "a guest directory that gets a tmpfs of its own, not the root's overlay (repeatable; default /var/lib/kubeproof, where containerd keeps its overlay snapshots)", func(s string) error {
		scratch = append(scratch, s)
		return nil
	})
	if err := fs.Parse(os.Args[1:]); err != nil {
		return exitcode.Usage
	}
	if *results == "" || fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "cgroup2: usage: cgroup2 --results DIR [--report DIR] -- COMMAND [ARG...]")
		return exitcode.Usage
	}
	abs, err := filepath.Abs(*results)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cgroup2: error: --results: %v\n", err)
		return exitcode.Usage
	}
	if len(scratch) == 0 {
		scratch = []string{"/var/lib/kubeproof"}
	}
	if *reportDir == "" {
		*reportDir = filepath.Join(abs, "report")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	pr := progress.New(os.Stderr)
	began := time.Now()
	code, err := umlguest.Boot(ctx, umlguest.Spec{Command: fs.Args(), Results: abs, Dir: mustGetwd(), Scratch: scratch, Systemd: *systemd},
		umlguest.Options{Memory: *memory, Timeout: *timeout, Progress: pr})
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(os.Stderr, "cgroup2: interrupted: the guest was stopped")
		return exitcode.Interrupted
	case err != nil:
		fmt.Fprintf(os.Stderr, "cgroup2: error: %v\n", err)
		if c := exitcode.Of(err); c != exitcode.Internal {
			return c
		}
		return exitcode.ClusterSetup
	case code == umlguest.SetupFailed:
		fmt.Fprintln(os.Stderr, "cgroup2: error: the guest could not be set up (its console above says why)")
		return exitcode.ClusterSetup
	}
	if *noReport {
		fmt.Printf("cgroup v2 guest: the command exited %d; %s in all\n", code, progress.Round(time.Since(began)))
		return exitcode.Code(code)
	}
	return judge(*reportDir, code, time.Since(began))
}

// judge decides by the report the command left: a failed spec or a partial
// report fails, whatever the command's exit code was.
func judge(dir string, commandCode int, took time.Duration) exitcode.Code {
	rep, err := report.Load(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			err = fmt.Errorf("the command (exit code %d) left no report in %s", commandCode, dir)
		}
		fmt.Fprintf(os.Stderr, "cgroup2: error: %v\n", err)
		return exitcode.ClusterSetup
	}
	report.Terminal(os.Stdout, rep)
	var failed []string
	for _, s := range rep.Specs {
		if s.Failed() {
			failed = append(failed, s.ID)
		}
	}
	fmt.Printf("\ncgroup v2 guest: %d specs in the report, %d failed %v; the command exited %d; %s in all\n",
		len(rep.Specs), len(failed), failed, commandCode, progress.Round(took))
	switch {
	case len(failed) > 0:
		return exitcode.SpecsFailed
	case rep.Partial != "":
		fmt.Fprintf(os.Stderr, "cgroup2: the report is partial: %s\n", rep.Partial)
		return exitcode.SpecsFailed
	case commandCode != 0:
		return exitcode.Code(commandCode)
	}
	return exitcode.OK
}

func mustGetwd() string {
	wd, err := os.Getwd()
	if err != nil {
		return "/"
	}
	return wd
}
