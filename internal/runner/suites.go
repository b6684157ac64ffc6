package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/speclink"
	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/judge"
	"github.com/kubeproof/kubeproof/internal/report"
)

// Suites is one run of the suites on a cluster that is up: which claims,
// which specs, how.
type Suites struct {
	Catalog  *claims.Catalog
	Selected []claims.Claim
	Filter   string
	Specs    Specs
	// SpecArgs are extra flags for the spec processes.
	SpecArgs []string
	// RemovesCluster: the cluster is removed once the suites end, so they
	// do not wait for their namespaces to go.
	RemovesCluster bool
	// RefutedFails: claims-junit.xml shows refuted claims as failures.
	RefutedFails bool
}

// On runs the suites against the cluster info describes, judges the
// claims and writes the reports into reportDir. The code says whether a
// spec failed.
func (s Suites) On(ctx context.Context, info *cluster.Info, reportDir string) (report.Report, exitcode.Code, error) {
	if err := os.MkdirAll(reportDir, 0o755); err != nil {
		return report.Report{}, exitcode.Usage, exitcode.Errorf(exitcode.Usage, "report directory: %v", err)
	}
	infoPath := filepath.Join(reportDir, "cluster.json")
	if err := info.Save(infoPath); err != nil {
		return report.Report{}, exitcode.Internal, err
	}
	Printer().Infof("running the suites against %s cluster %q (Kubernetes %s); reports in %s", info.Provider, info.Name, info.KubernetesVersion, reportDir)
	code := exitcode.OK
	_ = os.Remove(filepath.Join(reportDir, SpecsReportName)) // a report of an earlier run must not be judged again
	if s.Filter != NoSpecs {
		var err error
		args := s.SpecArgs
		// The spec processes make a spec of each probe of the run's claims
		// files.
		for _, file := range s.Catalog.ProbeFiles() {
			args = append(slices.Clip(args), "--kubeproof.claims-file="+file)
		}
		if s.RemovesCluster {
			args = append(slices.Clip(args), "--kubeproof.cluster-removed-after-run")
		}
		if code, err = RunSpecs(ctx, infoPath, reportDir, s.Filter, s.Specs, args); err != nil {
			return report.Report{}, code, err
		}
	}
	interrupted := ctx.Err() != nil
	if interrupted && InterruptsOf(ctx).SkipReport() {
		return report.Report{}, code, ctx.Err()
	}
	rep, err := Judge(reportDir, s.Catalog, s.Selected, info, interrupted, s.RefutedFails)
	if err == nil && interrupted {
		err = ctx.Err()
	}
	return rep, code, err
}

// SpecsReportName is the Ginkgo JSON report the judge reads.
const SpecsReportName = "specs.json"

// NoSpecs is the label filter of a selection that names no spec (only
// claims no cluster can test).
const NoSpecs = "\x00no-specs"

// SpecFilter restricts a run to the specs of the selected claims (and to
// the user's own filter, if any).
func SpecFilter(selected []claims.Claim, userFilter string) string {
	ids := claims.SpecIDs(selected)
	if len(ids) == 0 {
		return NoSpecs
	}
	return specsFilter(ids, userFilter)
}

// specsFilter is the label filter of the specs ids (at least one), within
// filter if one is given.
func specsFilter(ids []string, filter string) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = speclink.SpecLabelPrefix + id
	}
	f := "(" + strings.Join(parts, " || ") + ")"
	if filter != "" {
		f += " && (" + filter + ")"
	}
	return f
}

// Judge gives each selected claim its verdict from the run's spec report
// and writes claims.json, claims.md, claims.html and claims-junit.xml
// (where refuted claims are failures when refutedFails), and junit.xml
// from the spec report.
func Judge(reportDir string, cat *claims.Catalog, selected []claims.Claim, info *cluster.Info, interrupted, refutedFails bool) (report.Report, error) {
	return judgeInto(reportDir, cat, selected, info, interrupted, refutedFails, nil)
}

// JudgeAgain judges the finished run of report directory from again into
// to, a report directory of its own (specs.json and cluster.json copied
// there, the cluster info as info has it), or into from itself when to is
// from. The report says which run
// it judged and keeps the kubeproof that ran it.
func JudgeAgain(from, to string, cat *claims.Catalog, selected []claims.Claim, info *cluster.Info, interrupted, refutedFails bool) (report.Report, error) {
	prior, priorErr := report.Load(from)
	if filepath.Clean(from) != filepath.Clean(to) {
		if err := os.MkdirAll(to, 0o755); err != nil {
			return report.Report{}, fmt.Errorf("create report directory: %w", err)
		}
		if err := copyFile(filepath.Join(from, SpecsReportName), filepath.Join(to, SpecsReportName)); err != nil {
			return report.Report{}, fmt.Errorf("copy the run's %s: %w", SpecsReportName, err)
		}
		// Saved, not copied: the cluster info of an older release gets
		// the schemaVersion of today's.
		if err := info.Save(filepath.Join(to, "cluster.json")); err != nil {
			return report.Report{}, err
		}
	}
	return judgeInto(to, cat, selected, info, interrupted, refutedFails, func(r *report.Report) {
		if priorErr == nil && prior.JudgedFrom != "" {
			r.JudgedFrom = prior.JudgedFrom
		} else {
			r.JudgedFrom = from
		}
		// The specs ran under the run's kubeproof, not this one.
		if r.Run != nil {
			r.Run.Kubeproof = nil
			if priorErr == nil && prior.Run != nil {
				r.Run.Kubeproof = prior.Run.Kubeproof
			}
		}
	})
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o644)
}

func judgeInto(reportDir string, cat *claims.Catalog, selected []claims.Claim, info *cluster.Info, interrupted, refutedFails bool, adjust func(*report.Report)) (report.Report, error) {
	run := judge.Run{Specs: map[string]judge.SpecResult{}}
	path := filepath.Join(reportDir, SpecsReportName)
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
	if adjust != nil {
		adjust(&rep)
	}
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
