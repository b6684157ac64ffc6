package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/internal/clusterflags"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/report"
	"github.com/kubeproof/kubeproof/internal/runner"
	"github.com/kubeproof/kubeproof/internal/tools/faults"
)

type faultsOptions struct {
	matrix    string
	only      []string
	ci        bool
	focused   bool
	baseline  string
	reportDir string
	specs     runner.Specs
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
	f.BoolVar(&fo.focused, "focused", false, "on each faulty cluster, run only the specs behind the claims the fault lists (other claims' changes are counted among theirs only)")
	f.StringVar(&fo.baseline, "baseline", "", "report directory of a run on a healthy cluster to compare with, instead of making one")
	f.StringVar(&fo.reportDir, "report-dir", "_output/faults", "directory for faults.md, faults.json and each run's reports")
	f.IntVar(&fo.specs.Parallel, "parallel", 4, "run the specs in this many parallel processes")
	f.DurationVar(&fo.specs.Timeout, "timeout", time.Hour, "give up on one run's suites after this long")
	return cmd
}

func runFaults(cmd *cobra.Command, o *options, fo *faultsOptions) error {
	ctx := cmd.Context()
	req, err := request(cmd, o)
	if err != nil {
		return err
	}
	if !req.Makes() {
		return exitcode.Errorf(exitcode.Usage, "faults breaks clusters on purpose: it needs a provider that makes them (local, kind), not %s", o.Provider)
	}
	for _, name := range []string{clusterflags.ComponentArg.Name, clusterflags.Without.Name, clusterflags.AdmissionConfig.Name} {
		if cmd.Flags().Changed(name) {
			// Not silently ignored: the matrix's clusters are its own.
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
	m, err := faults.Parse(data, cat)
	if err != nil {
		return exitcode.With(exitcode.Usage, err)
	}
	selected, err := m.Select(fo.only, fo.ci)
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
	plan := faults.Plan{Cluster: req, Catalog: cat, Faults: selected, Specs: fo.specs, ReportDir: dir, Focused: fo.focused}
	if fo.baseline != "" {
		healthy, err := report.Load(fo.baseline)
		if err != nil {
			return exitcode.With(exitcode.Usage, fmt.Errorf("--baseline: %w", err))
		}
		plan.Baseline = &healthy
	}
	outcomes, err := faults.Run(ctx, plan)
	if err != nil {
		return err
	}
	if err := faults.WriteReports(dir, outcomes); err != nil {
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
