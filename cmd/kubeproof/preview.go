package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/runner"
	"github.com/kubeproof/kubeproof/internal/tools/jsonout"
)

// checkSelection asks the specs which of them the run's filters select
// (runner.PreviewSpecs) and returns them (nil without filters: every
// spec); a selection of no spec stops the run before anything is brought
// up. With dryRun it prints what would run,
// each spec with the selected claims that name it (the catalog's and
// --claims-file's), as JSON with output json, and stops the run.
// probeFiles are the claims files whose probes are specs too.
func checkSelection(ctx context.Context, w io.Writer, selected []claims.Claim, probeFiles []string, labelFilter string, focus, skip []string, dryRun bool, output string) (run []runner.SelectedSpec, stop bool, err error) {
	if labelFilter == "" && len(focus) == 0 && len(skip) == 0 && !dryRun {
		return nil, false, nil
	}
	if labelFilter == runner.NoSpecs {
		// No selected claim names a spec (all open or not testable): there
		// is nothing to ask the specs, and the run only reports them.
		if !dryRun {
			return nil, false, nil
		}
		if output == "json" {
			return nil, true, writeJSON(w, jsonout.NewDryRun(nil, 0))
		}
		fmt.Fprintln(w, "would run no spec: no selected claim names one")
		printUnchecked(w, selected)
		return nil, true, nil
	}
	run, total, err := runner.PreviewSpecs(ctx, labelFilter, focus, skip, probeFiles)
	if err != nil {
		return nil, true, err
	}
	if len(run) == 0 {
		return nil, true, exitcode.Errorf(exitcode.Usage, "the selection matches none of the %d specs (%s): nothing to run", total, describeSelection(labelFilter, focus, skip))
	}
	if !dryRun {
		return run, false, nil
	}
	for i := range run {
		for _, c := range selected {
			if slices.Contains(c.Specs, run[i].ID) {
				run[i].Claims = append(run[i].Claims, c.ID)
			}
		}
	}
	if output == "json" {
		return run, true, writeJSON(w, jsonout.NewDryRun(run, total))
	}
	fmt.Fprintf(w, "would run %d of %d specs:\n", len(run), total)
	for _, s := range run {
		fmt.Fprintf(w, "  %-34s %s\n", s.ID, s.Text)
		if len(s.Claims) > 0 {
			fmt.Fprintf(w, "  %-34s claims: %s\n", "", strings.Join(s.Claims, ", "))
		}
	}
	printUnchecked(w, selected)
	return run, true, nil
}

// printUnchecked lists the selected claims no spec checks (open or not
// testable), whose verdicts a run reports without running anything.
func printUnchecked(w io.Writer, selected []claims.Claim) {
	var lines []string
	for _, c := range selected {
		switch {
		case c.Open != "":
			lines = append(lines, fmt.Sprintf("  %-34s open: %s", c.ID, c.Open))
		case !c.Testable():
			lines = append(lines, fmt.Sprintf("  %-34s not testable: %s", c.ID, c.NotTestable))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintf(w, "selected claims no spec checks:\n%s\n", strings.Join(lines, "\n"))
	}
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
