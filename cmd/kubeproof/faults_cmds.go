package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/framework/claims"
	"github.com/kubeproof/kubeproof/internal/cli/clusterflags"
	"github.com/kubeproof/kubeproof/internal/cli/faultmatrix"
	"github.com/kubeproof/kubeproof/internal/cli/report"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/pki"
	"github.com/kubeproof/kubeproof/internal/provision/create"
)

type faultsOptions struct {
	matrix    string
	only      []string
	ci        bool
	baseline  string
	reportDir string
	run       runOptions
}

func newFaultsCommand(o *options) *cobra.Command {
	fo := &faultsOptions{}
	cmd := &cobra.Command{
		Use:   "faults",
		Short: "Check kubeproof itself: run the suites on clusters broken on purpose and check that each fault is found",
		Long: `faults runs the suites on a healthy local cluster and then on one local cluster per fault
of the fault matrix (fixtures/faults.yaml by default), each made broken in one way: a
component flag, a component left out, or a fault of the harness's own. For each fault it
checks that the claims the matrix lists take their verdicts (the claims about the broken
part refuted, those that depend on it not checkable), that no claim ends in error, and
that few other claims change. It writes faults.md and faults.json, and every run's
reports, under --report-dir.

Exit code 0 means every fault was found as described; 1 means one was not.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return runFaults(cmd, o, fo) },
	}
	addClusterFlags(cmd, o)
	f := cmd.Flags()
	f.StringVar(&fo.matrix, "matrix", "", "fault matrix file (default: the one kubeproof carries, fixtures/faults.yaml)")
	f.StringSliceVar(&fo.only, "fault", nil, "run only these faults (IDs, comma-separated)")
	f.BoolVar(&fo.ci, "ci", false, "run only the faults the matrix marks for CI")
	f.StringVar(&fo.baseline, "baseline", "", "report directory of a run on a healthy cluster to compare with, instead of making one")
	f.StringVar(&fo.reportDir, "report-dir", "_output/faults", "directory for faults.md, faults.json and each run's reports")
	f.IntVar(&fo.run.parallel, "parallel", 4, "run the specs in this many parallel processes")
	f.DurationVar(&fo.run.timeout, "timeout", time.Hour, "give up on one run's suites after this long")
	return cmd
}

func runFaults(cmd *cobra.Command, o *options, fo *faultsOptions) error {
	ctx := cmd.Context()
	if !makesClusters(o.provider) {
		return exitcode.Errorf(exitcode.Usage, "faults breaks clusters on purpose: it needs a provider that makes them (local, kind), not %s", o.provider)
	}
	for _, name := range []string{"component-arg", "without"} {
		if cmd.Flags().Changed(name) {
			return exitcode.Errorf(exitcode.Usage, "--%s: the fault matrix says how each cluster is broken", name)
		}
	}
	cat, err := claims.LoadAt(fixtures.Claims(), fixtures.ClaimsDir)
	if err != nil {
		return exitcode.With(exitcode.Internal, err)
	}
	data := fixtures.MustRead("faults.yaml")
	if fo.matrix != "" {
		if data, err = os.ReadFile(fo.matrix); err != nil {
			return exitcode.Errorf(exitcode.Usage, "--matrix: %v", err)
		}
	}
	m, err := faultmatrix.Parse(data, cat)
	if err != nil {
		return exitcode.With(exitcode.Usage, err)
	}
	faults, err := m.Select(fo.only, fo.ci)
	if err != nil {
		return exitcode.With(exitcode.Usage, fmt.Errorf("--fault: %w", err))
	}
	dir, err := filepath.Abs(fo.reportDir)
	if err != nil {
		return exitcode.Errorf(exitcode.Usage, "--report-dir: %v", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return exitcode.Errorf(exitcode.Usage, "--report-dir: %v", err)
	}
	pr := printer()
	suites := suiteRun{cat: cat, selected: cat.Claims, opts: &fo.run}

	var healthy report.Report
	if fo.baseline != "" {
		if healthy, err = report.Load(fo.baseline); err != nil {
			return exitcode.With(exitcode.Usage, fmt.Errorf("--baseline: %w", err))
		}
	} else {
		pr.Infof("fault matrix: a healthy cluster first")
		if healthy, err = runBroken(ctx, o, suites, faultmatrix.Fault{ID: "healthy"}, filepath.Join(dir, "healthy")); err != nil {
			return err
		}
	}
	var outcomes []faultmatrix.Outcome
	for i, f := range faults {
		pr.Infof("fault %d of %d: %s (%s)", i+1, len(faults), f.ID, f.Description)
		rep, err := runBroken(ctx, o, suites, f, filepath.Join(dir, f.ID))
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var out faultmatrix.Outcome
		if err != nil {
			out = faultmatrix.Outcome{Fault: f, RunError: err.Error()}
		} else {
			out = faultmatrix.Check(f, healthy, rep)
		}
		outcomes = append(outcomes, out)
		pr.Infof("fault %s: detected %t (%d of %d listed claims as expected, %d others changed, %d errors)",
			f.ID, out.Detected, len(out.AsListed), len(f.Expected()), len(out.Changed), len(out.Errors))
	}
	if err := writeFaultReports(dir, outcomes); err != nil {
		return err
	}
	missed := 0
	for _, o := range outcomes {
		if !o.Detected {
			missed++
		}
	}
	fmt.Printf("\nFault matrix: %d of %d faults detected as described; details in %s\n", len(outcomes)-missed, len(outcomes), filepath.Join(dir, "faults.md"))
	if missed > 0 {
		return exitcode.Errorf(exitcode.SpecsFailed, "%d faults were not detected as the matrix describes", missed)
	}
	return nil
}

// runBroken brings up a local cluster broken as f says, runs the suites on
// it, and removes it. A run whose specs fail is expected (the cluster is
// broken); one that cannot bring the cluster up or judge is an error.
func runBroken(ctx context.Context, o *options, s suiteRun, f faultmatrix.Fault, dir string) (report.Report, error) {
	work, err := os.MkdirTemp("", "kubeproof-fault-")
	if err != nil {
		return report.Report{}, fmt.Errorf("fault %s: %w", f.ID, err)
	}
	defer os.RemoveAll(work)
	args, err := faultArgs(f.ComponentArgs, work)
	if err != nil {
		return report.Report{}, fmt.Errorf("fault %s: %w", f.ID, err)
	}
	compArgs, err := clusterflags.ParseComponentArgs(args)
	if err != nil {
		return report.Report{}, err
	}
	shape := o.shape(compArgs)
	shape.Without, shape.Ephemeral = f.Without, true
	p, err := create.New(o.provider, o.providerOptions(shape, printer())...)
	if err != nil {
		return report.Report{}, err
	}
	if err := reapAbandoned(ctx, p, printer()); err != nil {
		return report.Report{}, err
	}
	if _, err := p.Info(ctx); err == nil {
		return report.Report{}, exitcode.Errorf(exitcode.Conflict, "cluster %q is up already: faults makes its own clusters (kubeproof down, or --name another)", o.name)
	}
	info, err := p.Up(ctx)
	if err != nil {
		return report.Report{}, fmt.Errorf("fault %s: bring the cluster up: %w", f.ID, err)
	}
	defer func() { _ = p.Down(context.WithoutCancel(ctx)) }()
	s.removesCluster = true
	if f.Inject != "" {
		s.specArgs = append(s.specArgs, "--kubeproof.inject-fault="+f.Inject)
	}
	rep, code, err := s.on(ctx, info, dir)
	if err != nil {
		return report.Report{}, fmt.Errorf("fault %s: %w", f.ID, err)
	}
	if code != exitcode.OK {
		exportLogs(ctx, p, dir)
	}
	return rep, nil
}

// faultArgs fills the matrix's placeholders: {untrusted-ca.crt} and
// {untrusted-ca.key} are a CA made for the run, which the cluster does
// not trust.
func faultArgs(args []string, work string) ([]string, error) {
	if !strings.Contains(strings.Join(args, " "), "{untrusted-ca.") {
		return args, nil
	}
	ca, err := pki.NewCA("kubeproof-untrusted-ca")
	if err != nil {
		return nil, err
	}
	kp, err := ca.KeyPair()
	if err != nil {
		return nil, err
	}
	crt, key := filepath.Join(work, "untrusted-ca.crt"), filepath.Join(work, "untrusted-ca.key")
	if err := os.WriteFile(crt, kp.CertPEM, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(key, kp.KeyPEM, 0o600); err != nil {
		return nil, err
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.NewReplacer("{untrusted-ca.crt}", crt, "{untrusted-ca.key}", key).Replace(a)
	}
	return out, nil
}

// loadReport reads the claims.json of a report directory.
func writeFaultReports(dir string, outcomes []faultmatrix.Outcome) error {
	data, err := json.MarshalIndent(outcomes, "", "  ")
	if err != nil {
		return fmt.Errorf("encode faults.json: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "faults.json"), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write faults.json: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, "faults.md"))
	if err != nil {
		return fmt.Errorf("write faults.md: %w", err)
	}
	defer f.Close()
	if err := faultmatrix.Markdown(f, outcomes); err != nil {
		return fmt.Errorf("write faults.md: %w", err)
	}
	return f.Close()
}
