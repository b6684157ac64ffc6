package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/internal/clusterflags"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/pki"
	"github.com/kubeproof/kubeproof/internal/provision"
	"github.com/kubeproof/kubeproof/internal/report"
	"github.com/kubeproof/kubeproof/internal/runner"
)

// Plan is a run of the fault matrix: the suites on a healthy cluster
// (or a baseline report of one) and on one cluster per fault.
type Plan struct {
	Cluster provision.Request
	Catalog *claims.Catalog
	Faults  []Fault
	// Baseline is the report of a run on a healthy cluster; nil: make one.
	Baseline *report.Report
	Specs    runner.Specs
	// ReportDir is absolute; each run's reports go into a directory of
	// its own there (healthy, and each fault's ID).
	ReportDir string
	// Focused runs, on each faulty cluster, only the specs behind the
	// claims the fault lists, and judges the claims those specs decide
	// alone: CI's way, minutes shorter per fault. Other claims' changes
	// are then counted among those claims only; a whole run of the suites
	// (make faults) counts them all.
	Focused bool
}

// Run runs the fault matrix and checks each fault's run against the
// healthy one. A fault whose run fails is an outcome (RunError), not an
// error; an interrupt or a healthy run that fails is.
func Run(ctx context.Context, plan Plan) ([]Outcome, error) {
	pr := runner.Printer()
	// Refuted claims are failures in claims-junit.xml, as run's default.
	suites := runner.Suites{Catalog: plan.Catalog, Selected: plan.Catalog.Claims, Specs: plan.Specs, RefutedFails: true}
	var healthy report.Report
	if plan.Baseline != nil {
		healthy = *plan.Baseline
	} else {
		pr.Infof("fault matrix: a healthy cluster first")
		var err error
		if healthy, err = runBroken(ctx, plan.Cluster, suites, Fault{ID: "healthy"}, filepath.Join(plan.ReportDir, "healthy")); err != nil {
			return nil, err
		}
	}
	var outcomes []Outcome
	for i, f := range plan.Faults {
		pr.Infof("fault %d of %d: %s (%s)", i+1, len(plan.Faults), f.ID, f.Description)
		s := suites
		if plan.Focused {
			s = focus(suites, f)
			pr.Infof("fault %s, focused: %d specs run (those of its %d listed claims), %d claims judged", f.ID, len(claims.SpecIDs(s.Selected)), len(f.Expected()), len(s.Selected))
		}
		rep, err := runBroken(ctx, plan.Cluster, s, f, filepath.Join(plan.ReportDir, f.ID))
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var out Outcome
		if err != nil {
			out = Outcome{Fault: f, RunError: err.Error()}
		} else {
			out = Check(f, healthy, rep)
		}
		outcomes = append(outcomes, out)
		pr.Infof("fault %s: detected %t (%d of %d listed claims as expected, %d others changed, %d errors)",
			f.ID, out.Detected, len(out.AsListed), len(f.Expected()), len(out.Changed), len(out.Errors))
	}
	return outcomes, nil
}

// focus narrows the suites to the specs behind the claims f lists, and
// the judged claims to those every one of whose specs is among them (a
// claim that also needs another spec would be judged on half its
// evidence).
func focus(s runner.Suites, f Fault) runner.Suites {
	expected := f.Expected()
	var listed []claims.Claim
	for _, c := range s.Catalog.Claims {
		if _, ok := expected[c.ID]; ok {
			listed = append(listed, c)
		}
	}
	specs := claims.SpecIDs(listed)
	var selected []claims.Claim
	for _, c := range s.Catalog.Claims {
		if len(c.Specs) > 0 && !slices.ContainsFunc(c.Specs, func(id string) bool { return !slices.Contains(specs, id) }) {
			selected = append(selected, c)
		}
	}
	s.Selected, s.Filter = selected, runner.SpecFilter(selected, "")
	return s
}

// runBroken brings up a cluster broken as f says, runs the suites on it,
// and removes it. A run whose specs fail is expected (the cluster is
// broken); one that cannot bring the cluster up or judge is an error.
func runBroken(ctx context.Context, req provision.Request, s runner.Suites, f Fault, dir string) (report.Report, error) {
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
	// The matrix says how the cluster is broken: its own flags and
	// components, and the API server's default admission configuration.
	req.Shape.ComponentArgs, req.Shape.Without, req.Shape.Ephemeral = compArgs, f.Without, true
	req.Local.AdmissionConfig = nil
	p, err := runner.NewProvider(ctx, req, runner.Printer())
	if err != nil {
		return report.Report{}, err
	}
	if _, err := p.Info(ctx); err == nil {
		return report.Report{}, exitcode.Errorf(exitcode.Conflict, "cluster %q is up already: faults makes its own clusters (kubeproof down, or --name another)", req.Shape.Name)
	}
	info, err := p.Up(ctx)
	if err != nil {
		return report.Report{}, fmt.Errorf("fault %s: bring the cluster up: %w", f.ID, err)
	}
	defer func() { _ = p.Down(context.WithoutCancel(ctx)) }()
	s.RemovesCluster = true
	if f.Inject != "" {
		s.SpecArgs = append(s.SpecArgs, "--kubeproof.inject-fault="+f.Inject)
	}
	rep, code, err := s.On(ctx, info, dir)
	if err != nil {
		return report.Report{}, fmt.Errorf("fault %s: %w", f.ID, err)
	}
	if code != exitcode.OK {
		runner.ExportLogs(ctx, p, dir)
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
