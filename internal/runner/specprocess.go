package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/kubeproof/kubeproof/internal/exitcode"
)

// Specs say how the spec processes run the selected specs.
type Specs struct {
	Focus []string
	Skip  []string
	// FlakeAttempts gives a failed spec more attempts; one that passes on
	// a later one is reported as flaky.
	FlakeAttempts     int
	PollProgressAfter time.Duration
	GinkgoArgs        []string
	Verbose           bool
	Timeout           time.Duration
	Parallel          int
	// KeepNamespaces keeps failed specs' namespaces.
	KeepNamespaces bool
	// ImagePullSecret has the credentials for the image registry.
	ImagePullSecret string
}

// specGrace is how long the spec processes get, after an interrupt, to stop
// their running specs, run their cleanup and write their reports, before
// they are killed: the whole run must end within seconds of a Ctrl-C.
const specGrace = 6 * time.Second

// RunSpecs runs the specs in a child process (this binary, as a Ginkgo
// test binary, or Ginkgo's CLI with its parallel processes): whatever
// happens there, this process survives to remove the cluster. The child
// gets its own process group, so a Ctrl-C reaches only us; we pass it on to
// the whole group (see WaitInterruptible).
func RunSpecs(ctx context.Context, infoPath, reportDir, labelFilter string, r Specs, specArgs []string) (exitcode.Code, error) {
	exe, err := os.Executable()
	if err != nil {
		return exitcode.Internal, fmt.Errorf("locate kubeproof executable: %w", err)
	}
	// Reports and filters, in the Ginkgo flag names of a test binary
	// (--ginkgo.x) or of Ginkgo's CLI (--x) for parallel runs.
	// junit.xml is written from the JSON report once the specs have run
	// (report.SpecsJUnit), in the shape CI readers keep.
	ginkgoFlags := []string{
		"json-report=" + filepath.Join(reportDir, SpecsReportName),
		"timeout=" + r.Timeout.String(),
	}
	if labelFilter != "" {
		ginkgoFlags = append(ginkgoFlags, "label-filter="+labelFilter)
	}
	for _, f := range r.Focus {
		ginkgoFlags = append(ginkgoFlags, "focus="+f)
	}
	for _, f := range r.Skip {
		ginkgoFlags = append(ginkgoFlags, "skip="+f)
	}
	if r.FlakeAttempts > 1 {
		ginkgoFlags = append(ginkgoFlags, "flake-attempts="+strconv.Itoa(r.FlakeAttempts))
	}
	if r.PollProgressAfter > 0 {
		ginkgoFlags = append(ginkgoFlags, "poll-progress-after="+r.PollProgressAfter.String(), "poll-progress-interval=30s")
	}
	if os.Getenv("GITHUB_ACTIONS") == "true" {
		// Failures as annotations of the workflow run.
		ginkgoFlags = append(ginkgoFlags, "github-output")
	}
	ginkgoFlags = append(ginkgoFlags, r.GinkgoArgs...)
	if r.Verbose {
		ginkgoFlags = append(ginkgoFlags, "v")
	}
	// Colours only on a terminal, and never with NO_COLOR
	// (https://no-color.org; --no-color sets it).
	if fi, err := os.Stdout.Stat(); err == nil && fi.Mode()&os.ModeCharDevice == 0 || os.Getenv("NO_COLOR") != "" {
		ginkgoFlags = append(ginkgoFlags, "no-color")
	}
	ours := []string{"--kubeproof.cluster-info=" + infoPath, "--kubeproof.report-dir=" + reportDir}
	if r.KeepNamespaces {
		ours = append(ours, "--kubeproof.keep-namespaces-on-failure")
	}
	if r.ImagePullSecret != "" {
		secret, err := filepath.Abs(r.ImagePullSecret)
		if err != nil {
			return exitcode.Usage, exitcode.Errorf(exitcode.Usage, "--image-pull-secret: %v", err)
		}
		ours = append(ours, "--kubeproof.image-pull-secret="+secret)
	}
	var argv []string
	if r.Parallel > 1 {
		runnerDir := filepath.Join(reportDir, ".runner")
		specs, err := specsBinary(runnerDir)
		if err != nil {
			return exitcode.Internal, err
		}
		defer os.RemoveAll(runnerDir)
		argv = []string{GinkgoProgram, "--procs=" + strconv.Itoa(r.Parallel)}
		for _, f := range ginkgoFlags {
			argv = append(argv, "--"+f)
		}
		argv = append(append(append(argv, specs, "--"), ours...), specArgs...)
	} else {
		argv = append(append([]string{"kubeproof-specs.test"}, ours...), specArgs...)
		for _, f := range ginkgoFlags {
			argv = append(argv, "--ginkgo."+f)
		}
	}
	child := &exec.Cmd{
		Path:        exe,
		Args:        argv,
		Stdout:      os.Stdout,
		Stderr:      os.Stderr,
		Dir:         reportDir,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if err := child.Start(); err != nil {
		return exitcode.Internal, fmt.Errorf("start the spec runner: %w", err)
	}
	err = WaitInterruptible(ctx, child, specGrace)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return exitcode.OK, nil
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		return exitcode.SpecsFailed, nil
	default:
		return exitcode.Internal, fmt.Errorf("the spec runner failed: %w", err)
	}
}

// WaitInterruptible waits for a child that leads its own process group
// (the spec runner, a command bench times). On the first interrupt every
// process of its group gets SIGINT (Ginkgo then interrupts the running
// specs, runs their cleanup, skips the rest and writes its reports); on
// the second, or when they have not ended within grace, SIGKILL.
func WaitInterruptible(ctx context.Context, child *exec.Cmd, grace time.Duration) error {
	pgid := child.Process.Pid
	group := func(sig syscall.Signal) { _ = syscall.Kill(-pgid, sig) }
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	kills := make(chan int, 4)
	unwatch := InterruptsOf(ctx).watch(func(n int) { kills <- n })
	defer unwatch()
	var deadline <-chan time.Time
	// Exactly one SIGINT: a second one tells Ginkgo to skip the cleanup.
	interrupt := func() {
		if deadline == nil {
			group(syscall.SIGINT)
			deadline = time.After(grace)
		}
	}
	done := ctx.Done()
	for {
		select {
		case err := <-exited:
			// Processes the runner started and left behind go with it.
			group(syscall.SIGKILL)
			return err
		case n := <-kills:
			if n == 1 {
				interrupt()
			} else {
				group(syscall.SIGKILL)
			}
		case <-done: // also when cancelled without a signal (a caller)
			done = nil
			interrupt()
		case <-deadline:
			Printer().Infof("%s did not stop within %s: killing it and what it started", filepath.Base(child.Args[0]), grace)
			group(syscall.SIGKILL)
		}
	}
}
