package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kubeproof/kubeproof/framework/claims"
	"github.com/kubeproof/kubeproof/internal/cli/judge"
	"github.com/kubeproof/kubeproof/internal/exitcode"
)

// selectedSpec is a spec a run would run: its ID, its text and the claims
// it decides.
type selectedSpec struct {
	ID     string
	Text   string
	Claims []string
}

// previewSpecs asks the specs themselves which of them a run with this label
// filter and focus would run: this binary as the spec runner with Ginkgo's
// dry run, which walks the specs without running any (no cluster needed).
func previewSpecs(ctx context.Context, labelFilter string, focus, skip []string) (run []selectedSpec, total int, err error) {
	dir, err := os.MkdirTemp("", "kubeproof-preview-")
	if err != nil {
		return nil, 0, fmt.Errorf("preview the selection: %w", err)
	}
	defer os.RemoveAll(dir)
	specs, err := specsBinary(dir)
	if err != nil {
		return nil, 0, err
	}
	report := filepath.Join(dir, "preview.json")
	args := []string{"--ginkgo.dry-run", "--ginkgo.no-color", "--ginkgo.json-report=" + report}
	if labelFilter != "" {
		args = append(args, "--ginkgo.label-filter="+labelFilter)
	}
	for _, f := range focus {
		args = append(args, "--ginkgo.focus="+f)
	}
	for _, f := range skip {
		args = append(args, "--ginkgo.skip="+f)
	}
	cmd := exec.CommandContext(ctx, specs, args...)
	cmd.Dir, cmd.Stdout = dir, io.Discard
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, 0, fmt.Errorf("preview the selection: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	data, err := os.ReadFile(report)
	if err != nil {
		return nil, 0, fmt.Errorf("preview the selection: %w", err)
	}
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil || len(reports) == 0 {
		return nil, 0, fmt.Errorf("preview the selection: read the dry run's report: %v", err)
	}
	for _, s := range reports[0].SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		total++
		if s.State != types.SpecStatePassed {
			continue
		}
		sel := selectedSpec{Text: strings.Join(append(s.ContainerHierarchyTexts, s.LeafNodeText), " ")}
		for _, l := range s.Labels() {
			if id, ok := strings.CutPrefix(l, claims.SpecLabelPrefix); ok {
				sel.ID = id
			} else if id, ok := strings.CutPrefix(l, claims.ClaimLabelPrefix); ok {
				sel.Claims = append(sel.Claims, id)
			}
		}
		run = append(run, sel)
	}
	return run, total, nil
}

// checkSelection stops a run whose filters select no spec, before anything
// is brought up; with dryRun it prints what would run (as JSON with output
// json) and stops the run.
func checkSelection(ctx context.Context, w io.Writer, labelFilter string, focus, skip []string, dryRun bool, output string) (stop bool, err error) {
	if labelFilter == "" && len(focus) == 0 && len(skip) == 0 && !dryRun {
		return false, nil
	}
	run, total, err := previewSpecs(ctx, labelFilter, focus, skip)
	if err != nil {
		return true, err
	}
	if len(run) == 0 {
		return true, exitcode.Errorf(exitcode.Usage, "the selection matches none of the %d specs (%s): nothing to run", total, describeSelection(labelFilter, focus, skip))
	}
	if !dryRun {
		return false, nil
	}
	if output == "json" {
		return true, writeJSON(w, dryRunDoc(run, total))
	}
	fmt.Fprintf(w, "would run %d of %d specs:\n", len(run), total)
	for _, s := range run {
		fmt.Fprintf(w, "  %-34s %s\n", s.ID, s.Text)
		if len(s.Claims) > 0 {
			fmt.Fprintf(w, "  %-34s claims: %s\n", "", strings.Join(s.Claims, ", "))
		}
	}
	return true, nil
}

// describeSelection names the filters of a run, as its flags.
func describeSelection(labelFilter string, focus, skip []string) string {
	var parts []string
	if labelFilter != "" {
		parts = append(parts, fmt.Sprintf("--label-filter %q", labelFilter))
	}
	for _, f := range focus {
		parts = append(parts, fmt.Sprintf("--focus %q", f))
	}
	for _, f := range skip {
		parts = append(parts, fmt.Sprintf("--skip %q", f))
	}
	return strings.Join(parts, " ")
}

// failedSpecsFilter is a label filter for the specs that failed in the run
// of report directory dir (its specs.json), within filter if one is given.
func failedSpecsFilter(dir, filter string) (string, error) {
	run, err := judge.LoadGinkgoReport(filepath.Join(dir, specsReportName))
	if err != nil {
		return "", exitcode.Errorf(exitcode.Usage, "--rerun-failed %s: %v", dir, err)
	}
	var ids []string
	for id, s := range run.Specs {
		if s.State == types.SpecStateFailed.String() || s.State == types.SpecStatePanicked.String() ||
			s.State == types.SpecStateTimedout.String() || s.State == types.SpecStateInterrupted.String() {
			ids = append(ids, claims.SpecLabelPrefix+id)
		}
	}
	if len(ids) == 0 {
		return "", exitcode.Errorf(exitcode.Usage, "--rerun-failed %s: no spec failed in that run", dir)
	}
	slices.Sort(ids)
	f := "(" + strings.Join(ids, " || ") + ")"
	if filter != "" {
		f += " && (" + filter + ")"
	}
	return f, nil
}
