package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kubeproof/kubeproof/framework/claims"
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
func previewSpecs(ctx context.Context, labelFilter string, focus []string) (run []selectedSpec, total int, err error) {
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
// is brought up; with dryRun it prints what would run and stops the run.
func checkSelection(ctx context.Context, w io.Writer, labelFilter string, focus []string, dryRun bool) (stop bool, err error) {
	if labelFilter == "" && len(focus) == 0 && !dryRun {
		return false, nil
	}
	run, total, err := previewSpecs(ctx, labelFilter, focus)
	if err != nil {
		return true, err
	}
	if len(run) == 0 {
		return true, exitcode.Errorf(exitcode.Usage, "the selection matches none of the %d specs (%s): nothing to run", total, describeSelection(labelFilter, focus))
	}
	if !dryRun {
		return false, nil
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
func describeSelection(labelFilter string, focus []string) string {
	var parts []string
	if labelFilter != "" {
		parts = append(parts, fmt.Sprintf("--label-filter %q", labelFilter))
	}
	for _, f := range focus {
		parts = append(parts, fmt.Sprintf("--focus %q", f))
	}
	return strings.Join(parts, " ")
}
