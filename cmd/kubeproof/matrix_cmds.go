package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/internal/clusterflags"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision"
	"github.com/kubeproof/kubeproof/internal/report"
)

func newMatrixCommand(o *options) *cobra.Command {
	r := &runOptions{}
	var versions []string
	cmd := &cobra.Command{
		Use:   "matrix",
		Short: "Run the suites on several Kubernetes releases, one cluster after another, and report the verdicts side by side",
		Long: `matrix brings up a cluster of each release in turn (building what is missing), runs the
suites on it as run does, brings it down, and writes one report: every claim's verdict on
each release, the claims whose verdict differs first, with the evidence on each side.

Each release's own reports go to REPORT-DIR/<release>; the matrix (matrix.md, matrix.html,
matrix.json) to REPORT-DIR. CI jobs that ran one release each can be joined the same way
with kubeproof report merge. Exit code: the worst of the releases' runs.`,
		Example: `  kubeproof matrix --kubernetes-versions v1.34.4,v1.35.4,v1.36.3,v1.37.2 --parallel 4`,
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMatrix(cmd, o, r, versions)
		},
	}
	addClusterFlags(cmd, o)
	addRunFlags(cmd, r, "kubeproof-matrix")
	f := cmd.Flags()
	f.StringSliceVar(&versions, "kubernetes-versions", nil, "Kubernetes releases to run, in order (e.g. v1.36.3,v1.37.2; tested minors: "+strings.Join(provision.TestedMinors(), ", ")+")")
	// Each release gets its own etcd, and the cluster goes after each.
	for _, name := range []string{clusterflags.KubernetesVersion.Name, clusterflags.EtcdVersion.Name, "keep"} {
		_ = f.MarkHidden(name)
	}
	_ = cmd.MarkFlagRequired("kubernetes-versions")
	return cmd
}

// releaseRE is a Kubernetes release as --kubernetes-versions takes it.
var releaseRE = regexp.MustCompile(`^v1\.\d+\.\d+$`)

func runMatrix(cmd *cobra.Command, o *options, r *runOptions, versions []string) error {
	if len(versions) < 2 {
		return exitcode.Errorf(exitcode.Usage, "--kubernetes-versions: name two releases or more (a single release is `kubeproof run --kubernetes-version`)")
	}
	for i, v := range versions {
		if !releaseRE.MatchString(v) {
			return exitcode.Errorf(exitcode.Usage, "--kubernetes-versions: %q is not a release version like v1.37.2", v)
		}
		if slices.Contains(versions[:i], v) {
			return exitcode.Errorf(exitcode.Usage, "--kubernetes-versions: %s is named twice", v)
		}
	}
	if cmd.Flags().Changed(clusterflags.KubernetesVersion.Name) || cmd.Flags().Changed(clusterflags.EtcdVersion.Name) || cmd.Flags().Changed("keep") {
		return exitcode.Errorf(exitcode.Usage, "matrix picks each release's etcd and removes each cluster: --kubernetes-version, --etcd-version and --keep go with run")
	}
	if req, err := request(cmd, o); err != nil {
		return err
	} else if !req.Makes() {
		return exitcode.Errorf(exitcode.Usage, "matrix makes a cluster of each release: use --provider local or kind, not %s (%s)", req.Provider, req.Why)
	}
	pr := printer()
	p, err := newProvider(cmd, o, pr)
	if err != nil {
		return err
	}
	// A cluster already up runs one release: every run would use it.
	if info, err := p.Info(cmd.Context()); err == nil {
		return exitcode.Errorf(exitcode.Usage, "cluster %q (Kubernetes %s) is already up: matrix makes a cluster of each release; bring it down first or pick another --name",
			info.Name, info.KubernetesVersion)
	}
	base, err := filepath.Abs(r.reportDir)
	if err != nil {
		return exitcode.Errorf(exitcode.Usage, "--report-dir %q: %v", r.reportDir, err)
	}
	var dirs []string
	var worst error
	for i, v := range versions {
		pr.Infof("release %d of %d: Kubernetes %s", i+1, len(versions), v)
		o.Shape.KubernetesVersion, o.Shape.EtcdVersion = v, ""
		one := *r
		one.reportDir = filepath.Join(base, v)
		err := run(cmd, o, &one)
		if cmd.Context().Err() != nil {
			return err
		}
		if err != nil {
			if !errors.Is(err, errReported) {
				pr.Infof("Kubernetes %s: %v", v, err)
			}
			worst = worse(worst, err)
		}
		if _, serr := os.Stat(filepath.Join(one.reportDir, "claims.json")); serr == nil {
			dirs = append(dirs, one.reportDir)
		}
	}
	if len(dirs) == 0 {
		return worst
	}
	if err := mergeReports(dirs, base); err != nil {
		return err
	}
	return worst
}

// worse keeps the error with the higher exit code.
func worse(a, b error) error {
	if a == nil || exitcode.Of(b) > exitcode.Of(a) {
		return b
	}
	return a
}

func newReportMergeCommand() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "merge DIR...",
		Short: "Join report directories of runs on different releases or providers (e.g. CI jobs) into one matrix report",
		Long: `merge reads claims.json from each report directory and writes matrix.md, matrix.html and
matrix.json into --report-dir: every claim's verdict in each run, those that differ first,
with the evidence on each side (the same report kubeproof matrix writes).`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(_ *cobra.Command, dirs []string) error {
			return mergeReports(dirs, out)
		},
	}
	cmd.Flags().StringVar(&out, "report-dir", "kubeproof-matrix", "directory for matrix.md, matrix.html and matrix.json")
	return cmd
}

// mergeReports writes the matrix of the runs in dirs into out and prints
// its summary.
func mergeReports(dirs []string, out string) error {
	runs, err := loadReports(dirs)
	if err != nil {
		return err
	}
	m := report.NewMatrix(runs, report.RunNames(runs, dirs), dirs)
	if err := report.WriteMatrixFiles(out, m); err != nil {
		return err
	}
	report.MatrixTerminal(os.Stdout, m)
	printer().Infof("matrix: %s", strings.Join([]string{filepath.Join(out, "matrix.md"), filepath.Join(out, "matrix.html"), filepath.Join(out, "matrix.json")}, ", "))
	return nil
}

// loadReports reads claims.json of each report directory; one that cannot
// be read is a usage error naming it.
func loadReports(dirs []string) ([]report.Report, error) {
	var runs []report.Report
	for _, d := range dirs {
		r, err := report.Load(d)
		if err != nil {
			return nil, exitcode.With(exitcode.Usage, fmt.Errorf("report directory %s: %w", d, err))
		}
		runs = append(runs, r)
	}
	return runs, nil
}
