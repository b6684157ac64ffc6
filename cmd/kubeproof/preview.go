package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/framework/claims"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/runner"
)

// checkSelection stops a run whose filters select no spec, before anything
// is brought up; with dryRun it prints what would run, each spec with the
// selected claims that name it (the catalog's and --claims-file's), as JSON
// with output json, and stops the run. probeFiles are the claims files
// whose probes are specs of the run.
func checkSelection(ctx context.Context, w io.Writer, selected []claims.Claim, probeFiles []string, labelFilter string, focus, skip []string, dryRun bool, output string) (stop bool, err error) {
	if labelFilter == "" && len(focus) == 0 && len(skip) == 0 && !dryRun {
		return false, nil
	}
	run, total, err := runner.PreviewSpecs(ctx, labelFilter, focus, skip, probeFiles)
	if err != nil {
		return true, err
	}
	if len(run) == 0 {
		return true, exitcode.Errorf(exitcode.Usage, "the selection matches none of the %d specs (%s): nothing to run", total, describeSelection(labelFilter, focus, skip))
	}
	if !dryRun {
		return false, nil
	}
	for i := range run {
		for _, c := range selected {
			if slices.Contains(c.Specs, run[i].ID) {
				run[i].Claims = append(run[i].Claims, c.ID)
			}
		}
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
