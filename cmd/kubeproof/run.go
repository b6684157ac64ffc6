package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/framework/claims"
	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/internal/cli/judge"
	"github.com/kubeproof/kubeproof/internal/cli/report"
	"github.com/kubeproof/kubeproof/internal/exitcode"
)

type runOptions struct {
	sel     selection
	refuted refutedOptions
	dryRun  bool
	// output is how --dry-run prints what would run: table or json.
	output      string
	keep        bool
	reportDir   string
	labelFilter string
	focus       []string
	skip        []string
	// rerunFailed is a report directory whose failed specs this run runs.
	rerunFailed string
	// flakeAttempts gives a failed spec more attempts; one that passes on
	// a later one is reported as flaky.
	flakeAttempts     int
	pollProgressAfter time.Duration
	ginkgoArgs        []string
	verbose           bool
	timeout           time.Duration
	parallel          int
	// keepNamespaces keeps failed specs' namespaces.
	keepNamespaces bool
	// imagePullSecret has the credentials for o.imageRegistry.
	imagePullSecret string
}

func newRunCommand(o *options) *cobra.Command {
	r := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the suites: bring the cluster up if needed, run every spec, write reports, bring it down",
		Long: `run checks the cluster the provider names. With the local provider it brings the
cluster up first unless it is already up, and removes it afterwards unless --keep is
given (a cluster that was already up is left as it was). Reports go to --report-dir.

Exit code 0 means every selected spec ran and passed; 1 means a spec failed; other
codes mean kubeproof itself could not do its job (see kubeproof --help).`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return run(cmd, o, r) },
	}
	addClusterFlags(cmd, o)
	addRunFlags(cmd, r, "kubeproof-report")
	cmd.Flags().StringVarP(&r.output, "output", "o", "table", "with --dry-run: how to print what would run, table or json")
	return cmd
}

// addRunFlags are the flags of a run of the suites (run, matrix): the
// selection, how specs run, and where reports go.
func addRunFlags(cmd *cobra.Command, r *runOptions, reportDir string) {
	f := cmd.Flags()
	f.BoolVar(&r.keep, "keep", false, "leave a cluster this run brought up running afterwards")
	f.StringVar(&r.reportDir, "report-dir", reportDir, "directory for claims.md, claims.html, claims.json, junit.xml, the cluster info and (on failure) component logs")
	f.StringVar(&r.labelFilter, "label-filter", "", "run only specs whose labels match this Ginkgo label filter, e.g. 'claim:002-RUNNING-STATUS'")
	f.StringArrayVar(&r.focus, "focus", nil, "run only specs whose text matches this regular expression (repeatable; a comma is part of the expression)")
	f.BoolVarP(&r.verbose, "verbose", "v", false, "print every spec's steps as it runs")
	f.DurationVar(&r.timeout, "timeout", time.Hour, "give up on the suites after this long")
	f.IntVar(&r.parallel, "parallel", 1, "run the specs in this many parallel processes (specs labelled Serial still run alone)")
	f.StringVar(&r.imagePullSecret, "image-pull-secret", "", "docker config file with the credentials your nodes need for --image-registry (each spec's namespace gets it as a pull secret)")
	f.BoolVar(&r.keepNamespaces, "keep-namespaces-on-failure", false, "keep a failed spec's namespace (labelled kubeproof.io/kept) to look at, instead of deleting it; its dump is in failures/ either way")
	f.StringArrayVar(&r.skip, "skip", nil, "do not run specs whose text matches this regular expression (repeatable)")
	f.StringVar(&r.rerunFailed, "rerun-failed", "", "run only the specs that failed in the run whose report directory this is")
	f.IntVar(&r.flakeAttempts, "flake-attempts", 1, "attempts a failing spec gets; one that passes on a later attempt is reported as flaky, not as passed")
	f.DurationVar(&r.pollProgressAfter, "poll-progress-after", 0, "print the progress of a spec that has run this long, then every 30 s (0: never)")
	f.StringArrayVar(&r.ginkgoArgs, "ginkgo-arg", nil, "a Ginkgo flag for the spec runner, without its prefix, e.g. randomize-all or seed=42 (repeatable)")
	f.BoolVar(&r.dryRun, "dry-run", false, "list the specs the selection would run and the claims they decide; bring nothing up")
	addRefutedFlags(cmd, &r.refuted)
	r.sel.addFlags(cmd, true)
}

// refutedOptions say what a refuted claim does: to the exit code
// (--fail-on-refuted) and, apart from it, in claims-junit.xml
// (--junit-refuted-as): by default a failure there, as CI readers show
// passing tests' output to nobody, while the run still exits 0.
type refutedOptions struct {
	failOnRefuted bool
	junitAs       string
}

func addRefutedFlags(cmd *cobra.Command, r *refutedOptions) {
	f := cmd.Flags()
	f.BoolVar(&r.failOnRefuted, "fail-on-refuted", false, "exit with code 10 when a documented claim is refuted (by default refuted documentation is reported, not failed)")
	f.StringVar(&r.junitAs, "junit-refuted-as", string(report.RefutedFailure), "what a refuted claim is in claims-junit.xml, whatever the exit code: failure (its message says what the cluster did instead) or passed (the verdict only in its output)")
}

// junitRefutedFails says whether claims-junit.xml shows refuted claims as
// failures (the default also for runs without the flag: faults).
func (r refutedOptions) junitRefutedFails() (bool, error) {
	switch report.JUnitRefuted(r.junitAs) {
	case report.RefutedFailure, "":
		return true, nil
	case report.RefutedPassed:
		return false, nil
	}
	return false, exitcode.Errorf(exitcode.Usage, "--junit-refuted-as %q: want failure or passed", r.junitAs)
}

func run(cmd *cobra.Command, o *options, r *runOptions) (err error) {
	ctx := cmd.Context()
	if _, err := types.ParseLabelFilter(r.labelFilter); err != nil {
		return exitcode.Errorf(exitcode.Usage, "--label-filter %q: %v", r.labelFilter, err)
	}
	cat, selected, err := r.sel.selected()
	if err != nil {
		return err
	}
	// Specs carry only their spec:<id> label: a claim:<id> of the user's
	// filter is the specs the catalog names for it.
	filter := cat.SpecLabelFilter(r.labelFilter)
	if r.sel.narrowed() {
		filter = specFilter(selected, filter)
	}
	if r.rerunFailed != "" {
		if filter, err = failedSpecsFilter(r.rerunFailed, filter); err != nil {
			return err
		}
	}
	if _, err := r.refuted.junitRefutedFails(); err != nil {
		return err
	}
	switch {
	case r.output == "":
		r.output = "table" // matrix runs have no --output
	case r.output == "json" && !r.dryRun:
		return exitcode.Errorf(exitcode.Usage, "--output json goes with --dry-run (a run's results are in claims.json of --report-dir)")
	}
	if err := checkOutput(r.output); err != nil {
		return err
	}
	if r.flakeAttempts < 1 {
		return exitcode.Errorf(exitcode.Usage, "--flake-attempts %d: want 1 or more", r.flakeAttempts)
	}
	if r.parallel < 1 {
		return exitcode.Errorf(exitcode.Usage, "--parallel %d: want 1 or more", r.parallel)
	}
	if r.imagePullSecret != "" {
		if o.imageRegistry == "" {
			return exitcode.Errorf(exitcode.Usage, "--image-pull-secret goes with --image-registry")
		}
		if _, err := os.Stat(r.imagePullSecret); err != nil {
			return exitcode.Errorf(exitcode.Usage, "--image-pull-secret: %v", err)
		}
	}
	var sel specSelection
	if filter != noSpecs {
		if sel, err = newSpecSelection(filter, r.focus, r.skip); err != nil {
			return err
		}
	}
	// An empty selection is a usage error, found before anything is up.
	if stop, err := checkSelection(ctx, cmd.OutOrStdout(), filter, r.focus, r.skip, r.dryRun, r.output); stop || err != nil {
		return err
	}
	pr := printer()
	o.ephemeral = !r.keep
	p, err := newProvider(cmd, o, pr)
	if err != nil {
		return err
	}
	reportDir, err := filepath.Abs(r.reportDir)
	if err != nil {
		return exitcode.Errorf(exitcode.Usage, "--report-dir %q: %v", r.reportDir, err)
	}

	// The registry first: one that cannot take our images fails the run
	// before a cluster is made.
	if o.imageRegistry != "" {
		if err := pushWorkloads(ctx, o.cacheDir, o.imageRegistry, o.insecureRegistry); err != nil {
			return err
		}
	}
	info, down, removes, err := clusterFor(ctx, o, p, r.keep)
	if err != nil {
		return err
	}
	// Down runs also after Ctrl-C: a cluster we made must not outlive us.
	defer func() {
		if derr := down(); derr != nil && err == nil {
			err = derr
		}
	}()
	// The spec processes take our images from there (cluster.json).
	info.PullsFrom(o.imageRegistry, false)
	if err := preflight(ctx, info, pr); err != nil {
		return err
	}
	if filter != noSpecs {
		if err := podSecurityPreflight(ctx, info, sel, pr); err != nil {
			return err
		}
	}
	rep, code, err := suiteRun{cat: cat, selected: selected, filter: filter, opts: r, removesCluster: removes}.on(ctx, info, reportDir)
	if err != nil {
		if rep.Partial != "" {
			report.Terminal(os.Stdout, rep)
			pr.Infof("partial reports: %s", strings.Join(reportFiles(reportDir), ", "))
		}
		return err
	}
	report.Terminal(os.Stdout, rep)
	pr.Infof("reports: %s", strings.Join(reportFiles(reportDir), ", "))
	if summary := os.Getenv("GITHUB_STEP_SUMMARY"); summary != "" {
		if err := appendFile(summary, filepath.Join(reportDir, "claims.md")); err != nil {
			pr.Infof("the job summary gets no claims: %v", err)
		}
	}
	if code != exitcode.OK {
		exportLogs(ctx, p, reportDir)
		return exitcode.With(code, errReported)
	}
	return r.refuted.check(rep)
}

// check is --fail-on-refuted: exit code 10 when a claim was refuted.
func (r refutedOptions) check(rep report.Report) error {
	if n := rep.Summary[string(judge.Refuted)]; r.failOnRefuted && n > 0 {
		return exitcode.Errorf(exitcode.Refuted, "%d documented claims were refuted (--fail-on-refuted)", n)
	}
	return nil
}

// suiteRun is one run of the suites: which claims, which specs, how.
type suiteRun struct {
	cat      *claims.Catalog
	selected []claims.Claim
	filter   string
	opts     *runOptions
	// specArgs are extra flags for the spec processes.
	specArgs []string
	// removesCluster: the cluster is removed once the suites end, so they
	// do not wait for their namespaces to go.
	removesCluster bool
}

// on runs the suites against the cluster info describes, judges the
// claims and writes the reports into reportDir. The code says whether a
// spec failed.
func (s suiteRun) on(ctx context.Context, info *cluster.Info, reportDir string) (report.Report, exitcode.Code, error) {
	if err := os.MkdirAll(reportDir, 0o755); err != nil {
		return report.Report{}, exitcode.Usage, exitcode.Errorf(exitcode.Usage, "report directory: %v", err)
	}
	infoPath := filepath.Join(reportDir, "cluster.json")
	if err := info.Save(infoPath); err != nil {
		return report.Report{}, exitcode.Internal, err
	}
	printer().Infof("running the suites against %s cluster %q (Kubernetes %s); reports in %s", info.Provider, info.Name, info.KubernetesVersion, reportDir)
	code := exitcode.OK
	_ = os.Remove(filepath.Join(reportDir, specsReportName)) // a report of an earlier run must not be judged again
	if s.filter != noSpecs {
		var err error
		args := s.specArgs
		if s.removesCluster {
			args = append(slices.Clip(args), "--kubeproof.cluster-removed-after-run")
		}
		if code, err = runSpecProcess(ctx, infoPath, reportDir, s.filter, s.opts, args); err != nil {
			return report.Report{}, code, err
		}
	}
	interrupted := ctx.Err() != nil
	if interrupted && interruptsOf(ctx).skipReport() {
		return report.Report{}, code, ctx.Err()
	}
	refutedFails, _ := s.opts.refuted.junitRefutedFails() // checked before the run
	rep, err := judgeRun(reportDir, s.cat, s.selected, info, interrupted, refutedFails)
	if err == nil && interrupted {
		err = ctx.Err()
	}
	return rep, code, err
}

// specsReportName is the Ginkgo JSON report the judge reads.
const specsReportName = "specs.json"

// noSpecs is the label filter of a selection that names no spec (only
// claims no cluster can test).
const noSpecs = "\x00no-specs"

// specFilter restricts a run to the specs of the selected claims (and to the
// user's own filter, if any).
func specFilter(selected []claims.Claim, userFilter string) string {
	ids := claims.SpecIDs(selected)
	if len(ids) == 0 {
		return noSpecs
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = claims.SpecLabelPrefix + id
	}
	f := "(" + strings.Join(parts, " || ") + ")"
	if userFilter != "" {
		f += " && (" + userFilter + ")"
	}
	return f
}

// judgeRun gives each selected claim its verdict from the run's spec report
// and writes claims.json, claims.md, claims.html and claims-junit.xml
// (where refuted claims are failures when refutedFails), and junit.xml
// from the spec report.
func judgeRun(reportDir string, cat *claims.Catalog, selected []claims.Claim, info *cluster.Info, interrupted, refutedFails bool) (report.Report, error) {
	run := judge.Run{Specs: map[string]judge.SpecResult{}}
	path := filepath.Join(reportDir, specsReportName)
	if _, err := os.Stat(path); err == nil {
		if run, err = judge.LoadGinkgoReport(path); err != nil && !interrupted {
			return report.Report{}, err
		}
	}
	results := judge.Claims(selected, run.Specs, info)
	if interrupted {
		results = judge.Interrupted(results)
	}
	rep := report.New(cat.Documents, results, run, info)
	rep.RefutedFails = refutedFails
	// Every line of the documents kubeproof carries, decided: the
	// reviewer reads each document annotated, not only its claims.
	if err := rep.AddLines(cat, fixtures.Seeds(), fixtures.Sentences()); err != nil {
		return report.Report{}, err
	}
	if interrupted {
		rep.Partial = "the run was interrupted: verdicts cover what the specs observed before it; the other claims are not run"
	}
	if err := report.Write(reportDir, rep); err != nil {
		return report.Report{}, err
	}
	if _, err := os.Stat(path); err == nil {
		if err := report.SpecsJUnit(path, filepath.Join(reportDir, "junit.xml")); err != nil && !interrupted {
			return report.Report{}, err
		}
	}
	return rep, nil
}

// appendFile appends the file from to the file to (GitHub's job summary
// takes Markdown appended to $GITHUB_STEP_SUMMARY).
func appendFile(to, from string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func reportFiles(dir string) []string {
	var out []string
	for _, name := range []string{"claims.md", "claims.html", "claims.json", "claims-junit.xml", "junit.xml"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			out = append(out, filepath.Join(dir, name))
		}
	}
	return out
}

// runSpecProcess runs the specs in a child process (this binary, as a Ginkgo
// test binary, or Ginkgo's CLI with its parallel processes): whatever
// happens there, this process survives to remove the cluster. The child
// gets its own process group, so a Ctrl-C reaches only us; we pass it on to
// the whole group (see waitInterruptible).
func runSpecProcess(ctx context.Context, infoPath, reportDir, labelFilter string, r *runOptions, specArgs []string) (exitcode.Code, error) {
	exe, err := os.Executable()
	if err != nil {
		return exitcode.Internal, fmt.Errorf("locate kubeproof executable: %w", err)
	}
	// Reports and filters, in the Ginkgo flag names of a test binary
	// (--ginkgo.x) or of Ginkgo's CLI (--x) for parallel runs.
	// junit.xml is written from the JSON report once the specs have run
	// (report.SpecsJUnit), in the shape CI readers keep.
	ginkgoFlags := []string{
		"json-report=" + filepath.Join(reportDir, specsReportName),
		"timeout=" + r.timeout.String(),
	}
	if labelFilter != "" {
		ginkgoFlags = append(ginkgoFlags, "label-filter="+labelFilter)
	}
	for _, f := range r.focus {
		ginkgoFlags = append(ginkgoFlags, "focus="+f)
	}
	for _, f := range r.skip {
		ginkgoFlags = append(ginkgoFlags, "skip="+f)
	}
	if r.flakeAttempts > 1 {
		ginkgoFlags = append(ginkgoFlags, "flake-attempts="+strconv.Itoa(r.flakeAttempts))
	}
	if r.pollProgressAfter > 0 {
		ginkgoFlags = append(ginkgoFlags, "poll-progress-after="+r.pollProgressAfter.String(), "poll-progress-interval=30s")
	}
	if os.Getenv("GITHUB_ACTIONS") == "true" {
		// Failures as annotations of the workflow run.
		ginkgoFlags = append(ginkgoFlags, "github-output")
	}
	ginkgoFlags = append(ginkgoFlags, r.ginkgoArgs...)
	if r.verbose {
		ginkgoFlags = append(ginkgoFlags, "v")
	}
	if fi, err := os.Stdout.Stat(); err == nil && fi.Mode()&os.ModeCharDevice == 0 {
		ginkgoFlags = append(ginkgoFlags, "no-color")
	}
	ours := []string{"--kubeproof.cluster-info=" + infoPath, "--kubeproof.report-dir=" + reportDir}
	if r.keepNamespaces {
		ours = append(ours, "--kubeproof.keep-namespaces-on-failure")
	}
	if r.imagePullSecret != "" {
		secret, err := filepath.Abs(r.imagePullSecret)
		if err != nil {
			return exitcode.Usage, exitcode.Errorf(exitcode.Usage, "--image-pull-secret: %v", err)
		}
		ours = append(ours, "--kubeproof.image-pull-secret="+secret)
	}
	var argv []string
	if r.parallel > 1 {
		runnerDir := filepath.Join(reportDir, ".runner")
		specs, err := specsBinary(runnerDir)
		if err != nil {
			return exitcode.Internal, err
		}
		defer os.RemoveAll(runnerDir)
		argv = []string{ginkgoProgram, "--procs=" + strconv.Itoa(r.parallel)}
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
	err = waitInterruptible(ctx, child, specGrace)
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

// exportLogs copies the cluster's component logs into the report directory,
// for providers that can.
func exportLogs(ctx context.Context, p cluster.Provider, reportDir string) {
	le, ok := p.(cluster.LogExporter)
	if !ok {
		return
	}
	dir := filepath.Join(reportDir, "logs")
	if err := le.ExportLogs(ctx, dir); err != nil {
		fmt.Fprintf(os.Stderr, "kubeproof: could not export cluster logs: %v\n", err)
		return
	}
	fmt.Fprintf(os.Stderr, " • cluster logs for the failure are in %s\n", dir)
}

func newReportCommand() *cobra.Command {
	sel := &selection{}
	var dir string
	var refuted refutedOptions
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Judge the claims again from a finished run's report directory (specs.json, cluster.json)",
		Long: `report reads the spec report and cluster info of a run (for example a run made with
go test -tags e2e ./suites -args --ginkgo.json-report=DIR/specs.json) and writes the
claims reports there again (claims.md, claims.html, claims.json, claims-junit.xml and
junit.xml), with the catalog of this binary and --claims-file; the report of an
interrupted run stays partial. --fail-on-refuted and --junit-refuted-as act as they do
for run.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			refutedFails, err := refuted.junitRefutedFails()
			if err != nil {
				return err
			}
			cat, selected, err := sel.selected()
			if err != nil {
				return err
			}
			info, err := cluster.Load(filepath.Join(dir, "cluster.json"))
			if err != nil {
				return exitcode.With(exitcode.Usage, fmt.Errorf("--report-dir %s: %w", dir, err))
			}
			if _, err := os.Stat(filepath.Join(dir, specsReportName)); err != nil {
				return exitcode.Errorf(exitcode.Usage, "--report-dir %s has no %s", dir, specsReportName)
			}
			// A run that was interrupted stays a partial report: its
			// claims whose specs were stopped are not run, not errors.
			prior, err := report.Load(dir)
			interrupted := err == nil && prior.Partial != ""
			rep, err := judgeRun(dir, cat, selected, info, interrupted, refutedFails)
			if err != nil {
				return err
			}
			report.Terminal(os.Stdout, rep)
			return refuted.check(rep)
		},
	}
	cmd.Flags().StringVar(&dir, "report-dir", "kubeproof-report", "the run's report directory")
	addRefutedFlags(cmd, &refuted)
	sel.addFlags(cmd, true)
	cmd.AddCommand(newReportDiffCommand(), newReportMergeCommand())
	return cmd
}

func newReportDiffCommand() *cobra.Command {
	var timing bool
	var output string
	cmd := &cobra.Command{
		Use:   "diff DIR DIR...",
		Short: "List the claims whose verdict differs between runs (their report directories)",
		Long: `diff reads claims.json from each report directory and prints, as a Markdown table, every
claim whose verdict is not the same in all of them; timing claims, whose verdicts follow
the machine's load, only with --timing. Exit code 1 when a verdict differs. With -o json,
the differences as a JSON document (docs/ci.md).`,
		Args: usageArgs(cobra.MinimumNArgs(2)),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			runs, err := loadReports(dirs)
			if err != nil {
				return err
			}
			diffs := report.Diff(runs, timing)
			if output == "json" {
				doc := diffJSON{SchemaVersion: diffSchema, Runs: dirs, Timing: timing, Differences: append([]report.Difference{}, diffs...)}
				if err := writeJSON(cmd.OutOrStdout(), doc); err != nil {
					return err
				}
			} else {
				report.WriteDiff(cmd.OutOrStdout(), dirs, diffs)
			}
			if len(diffs) > 0 {
				return exitcode.With(exitcode.SpecsFailed, errReported)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&timing, "timing", false, "also list timing claims")
	addOutputFlag(cmd, &output)
	return cmd
}

// clusterFor returns the info of the cluster the provider names, bringing
// it up first if the provider makes clusters and it is not up; down then
// removes it again unless keep is set (and does nothing otherwise).
// removes says whether down removes the cluster.
func clusterFor(ctx context.Context, o *options, p cluster.Provider, keep bool) (info *cluster.Info, down func() error, removes bool, err error) {
	nothing := func() error { return nil }
	info, err = p.Info(ctx)
	if err == nil {
		return info, nothing, false, nil
	}
	if !makesClusters(o.provider) {
		return nil, nothing, false, err
	}
	printer().Infof("cluster %q is not up (%v): bringing it up", o.name, err)
	if info, err = p.Up(ctx); err != nil {
		return nil, nothing, false, err
	}
	if keep {
		return info, nothing, false, nil
	}
	return info, func() error { return p.Down(context.WithoutCancel(ctx)) }, true, nil
}

// specGrace is how long the spec processes get, after an interrupt, to stop
// their running specs, run their cleanup and write their reports, before
// they are killed: the whole run must end within seconds of a Ctrl-C.
const specGrace = 6 * time.Second

// waitInterruptible waits for a child that leads its own process group (the
// spec runner). On the first interrupt every process of its group gets
// SIGINT (Ginkgo then interrupts the running specs, runs their cleanup,
// skips the rest and writes its reports); on the second, or when they have
// not ended within grace, SIGKILL.
func waitInterruptible(ctx context.Context, child *exec.Cmd, grace time.Duration) error {
	pgid := child.Process.Pid
	group := func(sig syscall.Signal) { _ = syscall.Kill(-pgid, sig) }
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	kills := make(chan int, 4)
	unwatch := interruptsOf(ctx).watch(func(n int) { kills <- n })
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
			printer().Infof("%s did not stop within %s: killing it and what it started", filepath.Base(child.Args[0]), grace)
			group(syscall.SIGKILL)
		}
	}
}
