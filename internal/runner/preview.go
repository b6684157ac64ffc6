package runner

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

	"github.com/kubeproof/kubeproof/claims/speclink"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/judge"
)

// SelectedSpec is a spec a run would run: its ID, its text and the claims
// it decides.
type SelectedSpec struct {
	ID     string
	Text   string
	Claims []string
}

// PreviewSpecs asks the specs themselves which of them a run with this label
// filter and focus would run: this binary as the spec runner with Ginkgo's
// dry run, which walks the specs without running any (no cluster needed);
// the probes of probeFiles (claims files) are specs too.
func PreviewSpecs(ctx context.Context, labelFilter string, focus, skip, probeFiles []string) (run []SelectedSpec, total int, err error) {
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
	for _, f := range probeFiles {
		args = append(args, "--kubeproof.claims-file="+f)
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
		sel := SelectedSpec{Text: strings.Join(append(s.ContainerHierarchyTexts, s.LeafNodeText), " ")}
		for _, l := range s.Labels() {
			if id, ok := strings.CutPrefix(l, speclink.SpecLabelPrefix); ok {
				sel.ID = id
			}
		}
		run = append(run, sel)
	}
	return run, total, nil
}

// FailedSpecsFilter is a label filter for the specs that failed in the run
// of report directory dir (its specs.json), within filter if one is given.
func FailedSpecsFilter(dir, filter string) (string, error) {
	run, err := judge.LoadGinkgoReport(filepath.Join(dir, SpecsReportName))
	if err != nil {
		return "", exitcode.Errorf(exitcode.Usage, "--rerun-failed %s: %v", dir, err)
	}
	var ids []string
	for id, s := range run.Specs {
		if s.State == types.SpecStateFailed.String() || s.State == types.SpecStatePanicked.String() ||
			s.State == types.SpecStateTimedout.String() || s.State == types.SpecStateInterrupted.String() {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return "", exitcode.Errorf(exitcode.Usage, "--rerun-failed %s: no spec failed in that run", dir)
	}
	slices.Sort(ids)
	return specsFilter(ids, filter), nil
}
