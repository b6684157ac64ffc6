package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision"
	"github.com/kubeproof/kubeproof/internal/report"
)

// ErrReported marks an outcome already printed (Ginkgo printed the failed
// specs); only its exit code remains to be given.
var ErrReported = errors.New("already reported")

// Plan is one run of the suites, as the flags of run (and of each release
// of matrix) describe it.
type Plan struct {
	Cluster provision.Request
	// Keep leaves a cluster the run brought up running afterwards.
	Keep bool
	// Catalog holds every claim; Selected those the run judges.
	Catalog  *claims.Catalog
	Selected []claims.Claim
	// Filter is the specs' label filter (NoSpecs: run none); Run are the
	// specs it selects with the specs' --focus and --skip, as the specs
	// themselves said in a dry run (PreviewSpecs): the one selection the
	// preflight and the dry run read. Nil: every spec (no filter).
	Filter string
	Run    []SelectedSpec
	Specs  Specs
	// ReportDir is absolute.
	ReportDir    string
	RefutedFails bool
	// ImagesPushed: the images the specs run are in the registry already
	// (a run inside the cluster, whose starter pushed them from where it
	// reaches the registry).
	ImagesPushed bool
}

// newProvider is NewProvider; the engine's tests give it a fake.
var newProvider = NewProvider

// Run runs the plan: the cluster (made if it is not up, removed afterwards
// unless kept), the preflight checks, the specs, the verdicts and the
// reports, and, when a spec failed, the cluster's logs. A failed spec is
// an error with its exit code and ErrReported.
func Run(ctx context.Context, plan Plan) (rep report.Report, err error) {
	out := os.Stdout
	pr := Printer()
	req := plan.Cluster
	req.Shape.Ephemeral = !plan.Keep
	// First, which cluster and why: a kubectl plugin that checked another
	// cluster than the user meant must say so before it does anything.
	pr.Infof("cluster: %s", req.Describe())
	p, err := newProvider(ctx, req, pr)
	if err != nil {
		return rep, err
	}
	registry, tag, push, from := req.Images()
	switch {
	case push && !plan.ImagesPushed:
		// The registry first: one that cannot take our images fails the
		// run before a cluster is made.
		if err := provision.PushWorkloads(ctx, req.Shape.CacheDir, registry, tag, req.Shape.InsecureRegistry, pr); err != nil {
			return rep, err
		}
	case push:
		pr.Infof("images: the nodes pull %s from %s (pushed by the run outside the cluster)", workloadRefs(registry, tag), registry)
	case registry != "":
		pr.Infof("images: the nodes pull %s from %s (%s)", workloadRefs(registry, tag), registry, from)
	}
	info, down, removes, err := ClusterFor(ctx, req, p, plan.Keep)
	if err != nil {
		return rep, err
	}
	// Down runs also after Ctrl-C: a cluster we made must not outlive us.
	defer func() {
		if derr := down(); derr != nil && err == nil {
			err = derr
		}
	}()
	// The spec processes take our images from there (cluster.json).
	info.PullsFrom(registry, tag, false)
	if err := preflight(ctx, info, pr); err != nil {
		return rep, err
	}
	if plan.Filter != NoSpecs {
		if err := podSecurityPreflight(ctx, info, plan.Run, pr); err != nil {
			return rep, err
		}
	}
	suites := Suites{Catalog: plan.Catalog, Selected: plan.Selected, Filter: plan.Filter, Specs: plan.Specs, RefutedFails: plan.RefutedFails, RemovesCluster: removes}
	rep, code, err := suites.On(ctx, info, plan.ReportDir)
	if err != nil {
		if rep.Partial != "" {
			report.Terminal(out, rep)
			pr.Infof("partial reports: %s", strings.Join(reportFiles(plan.ReportDir), ", "))
		}
		return rep, err
	}
	report.Terminal(out, rep)
	pr.Infof("reports: %s", strings.Join(reportFiles(plan.ReportDir), ", "))
	if summary := os.Getenv("GITHUB_STEP_SUMMARY"); summary != "" {
		if err := appendSummary(summary, rep, RunPageURL(), plan.ReportDir); err != nil {
			pr.Infof("the job summary gets no claims: %v", err)
		}
	}
	if code != exitcode.OK {
		ExportLogs(ctx, p, plan.ReportDir)
		return rep, exitcode.With(code, ErrReported)
	}
	return rep, nil
}

// appendSummary appends the report's bounded summary (report.Summary) to
// the file to: GitHub's job summary takes Markdown appended to
// $GITHUB_STEP_SUMMARY, up to 1 MiB.
func appendSummary(to string, rep report.Report, link, dir string) error {
	f, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if err := report.Summary(f, rep, link, dir); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// RunPageURL is the page of the GitHub Actions run this is part of, where
// its artifacts are listed; "" outside GitHub Actions.
func RunPageURL() string {
	server, repo, id := os.Getenv("GITHUB_SERVER_URL"), os.Getenv("GITHUB_REPOSITORY"), os.Getenv("GITHUB_RUN_ID")
	if server == "" || repo == "" || id == "" {
		return ""
	}
	return server + "/" + repo + "/actions/runs/" + id
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

// workloadRefs names the images the specs run, in registry at tag.
func workloadRefs(registry, tag string) string {
	var refs []string
	for _, img := range images.Workloads {
		refs = append(refs, images.InRegistry(img, registry, tag))
	}
	return strings.Join(refs, " and ")
}
