package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/judge"
	"github.com/kubeproof/kubeproof/internal/report"
	"github.com/kubeproof/kubeproof/internal/runner"
	"github.com/kubeproof/kubeproof/internal/tools/jsonout"
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
	// rerunFailed is a report directory whose failed specs this run runs.
	rerunFailed string
	// specs are how the spec processes run.
	specs runner.Specs
	// inCluster runs the specs in a Pod of the cluster; inClusterJob is
	// set in that Pod (the run there).
	inCluster    bool
	inClusterJob string
}

func newRunCommand(o *options) *cobra.Command {
	r := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the suites: bring the cluster up if needed, run every spec, write reports, bring it down",
		Long: `run checks the cluster the provider names. Without --provider: kubectl's current
context when run as kubectl kubeproof or given --kubeconfig or --context, else a local
cluster; the first line says which and why. With the local provider it brings the
cluster up first unless it is already up, and removes it afterwards unless --keep is
given (a cluster that was already up is left as it was). Reports go to --report-dir.

Exit code 0 means every selected spec ran and passed and no claim is an error; 13 that
a claim is an error (kubeproof could not decide it: always a failure); 1 that a spec
failed; 10, with --fail-on-refuted, that a claim was refuted; other codes that kubeproof
itself could not do its job (kubeproof help exit-codes).`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return run(cmd, o, r) },
	}
	addClusterFlags(cmd, o)
	addRunFlags(cmd, r, "kubeproof-report")
	addInClusterFlags(cmd, r)
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
	f.StringArrayVar(&r.specs.Focus, "focus", nil, "run only specs whose text matches this regular expression (repeatable; a comma is part of the expression)")
	f.DurationVar(&r.specs.Timeout, "timeout", time.Hour, "give up on the suites after this long")
	f.IntVar(&r.specs.Parallel, "parallel", 1, "run the specs in this many parallel processes (specs labelled Serial still run alone)")
	f.StringVar(&r.specs.ImagePullSecret, "image-pull-secret", "", "docker config file with the credentials your nodes need for --image-registry (each spec's namespace gets it as a pull secret)")
	f.BoolVar(&r.specs.KeepNamespaces, "keep-namespaces-on-failure", false, "keep a failed spec's namespace (labelled kubeproof.io/kept) to look at, instead of deleting it; its dump is in failures/ either way")
	f.StringArrayVar(&r.specs.Skip, "skip", nil, "do not run specs whose text matches this regular expression (repeatable)")
	f.StringVar(&r.rerunFailed, "rerun-failed", "", "run only the specs that failed in the run whose report directory this is")
	f.IntVar(&r.specs.FlakeAttempts, "flake-attempts", 1, "attempts a failing spec gets; one that passes on a later attempt is reported as flaky, not as passed")
	f.DurationVar(&r.specs.PollProgressAfter, "poll-progress-after", 0, "print the progress of a spec that has run this long, then every 30 s (0: never)")
	f.StringArrayVar(&r.specs.GinkgoArgs, "ginkgo-arg", nil, "a Ginkgo flag for the spec runner, without its prefix, e.g. randomize-all or seed=42 (repeatable)")
	f.BoolVar(&r.dryRun, "dry-run", false, "list the specs the selection would run and the claims they decide; bring nothing up")
	addRefutedFlags(cmd, &r.refuted)
	r.sel.addFlags(cmd, true)
	r.sel.lint = true
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

func run(cmd *cobra.Command, o *options, r *runOptions) error {
	r.specs.Verbose = verbose(cmd)
	in, err := r.inClusterOptions(cmd, o)
	if err != nil {
		return err
	}
	plan, stop, err := planRun(cmd, o, r)
	if stop || err != nil {
		return err
	}
	rep, err := execute(cmd.Context(), r, in, plan)
	return r.refuted.outcome(rep, err)
}

// planRun turns run's flags into the engine's plan; stop says the command
// is done before any cluster (--dry-run).
func planRun(cmd *cobra.Command, o *options, r *runOptions) (plan runner.Plan, stop bool, err error) {
	ctx := cmd.Context()
	if _, err := types.ParseLabelFilter(r.labelFilter); err != nil {
		return plan, false, exitcode.Errorf(exitcode.Usage, "--label-filter %q: %v", r.labelFilter, err)
	}
	cat, selected, err := r.sel.selected()
	if err != nil {
		return plan, false, err
	}
	filter := r.labelFilter
	if r.sel.restricted() {
		filter = runner.SpecFilter(selected, filter)
	}
	if r.rerunFailed != "" {
		if filter, err = runner.FailedSpecsFilter(r.rerunFailed, filter); err != nil {
			return plan, false, err
		}
	}
	refutedFails, err := r.refuted.junitRefutedFails()
	if err != nil {
		return plan, false, err
	}
	switch {
	case r.output == "":
		r.output = "table" // matrix runs have no --output
	case r.output == "json" && !r.dryRun:
		return plan, false, exitcode.Errorf(exitcode.Usage, "--output json goes with --dry-run (a run's results are in claims.json of --report-dir)")
	}
	if err := checkOutput(r.output); err != nil {
		return plan, false, err
	}
	if r.specs.FlakeAttempts < 1 {
		return plan, false, exitcode.Errorf(exitcode.Usage, "--flake-attempts %d: want 1 or more", r.specs.FlakeAttempts)
	}
	if r.specs.Parallel < 1 {
		return plan, false, exitcode.Errorf(exitcode.Usage, "--parallel %d: want 1 or more", r.specs.Parallel)
	}
	if r.specs.ImagePullSecret != "" {
		if o.Shape.ImageRegistry == "" {
			return plan, false, exitcode.Errorf(exitcode.Usage, "--image-pull-secret goes with --image-registry")
		}
		if _, err := os.Stat(r.specs.ImagePullSecret); err != nil {
			return plan, false, exitcode.Errorf(exitcode.Usage, "--image-pull-secret: %v", err)
		}
	}
	for _, e := range append(slices.Clone(r.specs.Focus), r.specs.Skip...) {
		if _, err := regexp.Compile(e); err != nil {
			return plan, false, exitcode.Errorf(exitcode.Usage, "--focus/--skip %q: %v", e, err)
		}
	}
	reportDir, err := filepath.Abs(r.reportDir)
	if err != nil {
		return plan, false, exitcode.Errorf(exitcode.Usage, "--report-dir %q: %v", r.reportDir, err)
	}
	req, err := request(cmd, o)
	if err != nil {
		return plan, false, err
	}
	// The specs say which of them the selection runs, once: the dry run
	// prints it, an empty selection is a usage error found before anything
	// is up, and the preflight reads it.
	specs, stop, err := checkSelection(ctx, cmd.OutOrStdout(), selected, cat.ProbeFiles(), filter, r.specs.Focus, r.specs.Skip, r.dryRun, r.output)
	if stop || err != nil {
		return plan, true, err
	}
	return runner.Plan{
		Cluster: req, Keep: r.keep,
		Catalog: cat, Selected: selected, Filter: filter, Run: specs, Specs: r.specs,
		ReportDir: reportDir, RefutedFails: refutedFails,
	}, false, nil
}

// outcome is a finished run's error, in the order of `kubeproof help
// exit-codes`: a harness error or an interruption as it is; then any claim
// in error (13, always: a harness that could not decide a claim must not
// pass CI); then a failed spec (1, runErr); then --fail-on-refuted (10).
func (r refutedOptions) outcome(rep report.Report, runErr error) error {
	if runErr != nil && exitcode.Of(runErr) != exitcode.SpecsFailed {
		return runErr
	}
	if n := rep.Summary[string(judge.Error)]; n > 0 && rep.Partial == "" {
		return exitcode.Errorf(exitcode.ClaimsErrored, "%s in error: kubeproof could not decide them (their reasons are in claims.md)", count(n, "claim"))
	}
	if runErr != nil {
		return runErr
	}
	return r.check(rep)
}

// check is --fail-on-refuted: exit code 10 when a claim was refuted.
func (r refutedOptions) check(rep report.Report) error {
	if n := rep.Summary[string(judge.Refuted)]; r.failOnRefuted && n > 0 {
		return exitcode.Errorf(exitcode.Refuted, "%d documented claims were refuted (--fail-on-refuted)", n)
	}
	return nil
}

func newReportCommand() *cobra.Command {
	sel := &selection{lint: true}
	var dir, to string
	var overwrite bool
	var refuted refutedOptions
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Judge the claims again from a finished run's report directory (specs.json, cluster.json), into a directory of its own",
		Long: `report reads the spec report and cluster info of a run (for example a run made with
go test -tags e2e ./suites -args --ginkgo.json-report=DIR/specs.json) and writes the
claims reports (claims.md, claims.html, claims.json, claims-junit.xml and junit.xml) into
a report directory of its own, --to (default: the run's directory with -judged), beside
copies of specs.json and cluster.json: the run's own files are left as they were unless
--overwrite asks to write over them. It judges with the catalog of this binary, or the
claims of --claims-file (checked first as claims lint checks it; with --document naming
your document's file, its quotes too): the way to iterate on your own claims file without
a cluster. A run made with --claims-file is judged with that file again when --claims-file
is not given (its path as the run's claims.json records it, from where report runs). The report of an interrupted run stays partial. --fail-on-refuted and
--junit-refuted-as act as they do for run, and so do the exit codes (kubeproof help
exit-codes).`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			refutedFails, err := refuted.junitRefutedFails()
			if err != nil {
				return err
			}
			out, err := judgedDir(dir, to, overwrite)
			if err != nil {
				return err
			}
			if err := sel.runsClaimsFile(dir); err != nil {
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
			if _, err := os.Stat(filepath.Join(dir, runner.SpecsReportName)); err != nil {
				return exitcode.Errorf(exitcode.Usage, "--report-dir %s has no %s", dir, runner.SpecsReportName)
			}
			// A run that was interrupted stays a partial report: its
			// claims whose specs were stopped are not run, not errors.
			prior, err := report.Load(dir)
			interrupted := err == nil && prior.Partial != ""
			rep, err := runner.JudgeAgain(dir, out, cat, selected, info, interrupted, refutedFails)
			if err != nil {
				return err
			}
			report.Terminal(os.Stdout, rep)
			printer().Infof("reports: %s", out)
			return refuted.outcome(rep, nil)
		},
	}
	cmd.Flags().StringVar(&dir, "report-dir", "kubeproof-report", "the run's report directory")
	cmd.Flags().StringVar(&to, "to", "", "the directory to write the reports into (default: --report-dir with -judged)")
	cmd.Flags().BoolVar(&overwrite, "overwrite", false, "write the reports into --report-dir itself, over the run's own")
	addRefutedFlags(cmd, &refuted)
	sel.addFlags(cmd, true)
	cmd.AddCommand(newReportDiffCommand(), newReportMergeCommand(), newReportSummaryCommand(), newReportPackCommand())
	return cmd
}

func newReportDiffCommand() *cobra.Command {
	var opts report.DiffOptions
	var output string
	cmd := &cobra.Command{
		Use:   "diff DIR DIR...",
		Short: "List the claims whose verdict differs between runs (their report directories)",
		Long: `diff reads claims.json from each report directory and prints, as a Markdown table, every
claim whose verdict is not the same in all of them; timing claims, whose verdicts follow
the machine's load, only with --timing. With --ignore-not-run, a run that did not run a
claim's specs is left out of its comparison (runs of different selections). Exit code 1
when a verdict differs. With -o json,
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
			diffs := report.Diff(runs, opts)
			if output == "json" {
				doc := jsonout.NewDiff(dirs, opts, diffs)
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
	cmd.Flags().BoolVar(&opts.Timing, "timing", false, "also list timing claims")
	cmd.Flags().BoolVar(&opts.IgnoreNotRun, "ignore-not-run", false, "compare each claim only among the runs that ran its specs")
	addOutputFlag(cmd, &output)
	return cmd
}

func newReportSummaryCommand() *cobra.Command {
	var link string
	cmd := &cobra.Command{
		Use:   "summary DIR",
		Short: "Print a run's short summary for a CI job's page: verdict counts, the claims in error and the refuted ones, a link",
		Long: `summary reads claims.json of the report directory DIR and prints, in Markdown, what a CI
job's summary page shows: the verdict counts, the claims in error and the refuted ones
(the first 50 of each, reasons cut short) and a link to the whole report. Whatever the
run, it stays under 256 KiB (GitHub's job summary drops a step's summary above 1 MiB).
kubeproof run appends it to $GITHUB_STEP_SUMMARY itself, linking the run's page; the
Action prints it again after the upload, linking the artifact:

  kubeproof report summary kubeproof-report --link "$ARTIFACT_URL" >> "$GITHUB_STEP_SUMMARY"`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			runs, err := loadReports(args)
			if err != nil {
				return err
			}
			if link == "" {
				link = runner.RunPageURL()
			}
			return report.Summary(cmd.OutOrStdout(), runs[0], link, args[0])
		},
	}
	cmd.Flags().StringVar(&link, "link", "", "where the whole report is (the uploaded artifact's URL); default: the GitHub Actions run's page, if any")
	return cmd
}
