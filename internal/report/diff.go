package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/internal/judge"
)

// Difference is one claim whose verdict is not the same in every run.
type Difference struct {
	Claim string `json:"claim"`
	Kind  string `json:"kind"`
	// Verdicts are the claim's verdict in each run, in order ("" where a
	// run did not judge it).
	Verdicts []string `json:"verdicts"`
	// Measured are a timing claim's measured values in each run ("" where
	// none was measured).
	Measured []string `json:"measured,omitempty"`
}

// DiffOptions say which verdicts Diff compares.
type DiffOptions struct {
	// Timing: compare timing claims too, whose verdicts follow the
	// machine's load.
	Timing bool
	// IgnoreNotRun: a run that did not run a claim's specs (not-run, or
	// not judged at all) says nothing about it; only the runs that judged
	// the claim are compared. For runs of different selections, as a
	// focused run beside a whole one.
	IgnoreNotRun bool
}

// Diff lists the claims whose verdict differs between runs.
func Diff(runs []Report, opts DiffOptions) []Difference {
	byRun := make([]map[string]judge.Result, len(runs))
	var ids []string
	for i, r := range runs {
		byRun[i] = map[string]judge.Result{}
		for _, d := range r.Documents {
			for _, res := range d.Claims {
				byRun[i][res.Claim.ID] = res
				if !slices.Contains(ids, res.Claim.ID) {
					ids = append(ids, res.Claim.ID)
				}
			}
		}
	}
	slices.Sort(ids)
	var out []Difference
	for _, id := range ids {
		d := Difference{Claim: id}
		for _, m := range byRun {
			res, ok := m[id]
			v, measured := "", ""
			if ok {
				v, d.Kind = string(res.Verdict), string(res.Claim.Kind)
				if res.Measurement != nil {
					measured = fmtMs(res.Measurement.Value) + " ms"
				}
			}
			d.Verdicts = append(d.Verdicts, v)
			d.Measured = append(d.Measured, measured)
		}
		if d.Kind == string(claims.Timing) && !opts.Timing {
			continue
		}
		if !slices.ContainsFunc(d.Measured, func(m string) bool { return m != "" }) {
			d.Measured = nil // a behaviour claim: nothing measured
		}
		compared := d.Verdicts
		if opts.IgnoreNotRun {
			compared = slices.DeleteFunc(slices.Clone(compared), func(v string) bool { return v == "" || v == string(judge.NotRun) })
		}
		if slices.ContainsFunc(compared, func(v string) bool { return v != compared[0] }) {
			out = append(out, d)
		}
	}
	return out
}

// WriteDiff prints the differences as a table, one column per run.
func WriteDiff(w io.Writer, names []string, diffs []Difference) {
	if len(diffs) == 0 {
		fmt.Fprintf(w, "every claim has the same verdict in all %d runs\n", len(names))
		return
	}
	fmt.Fprintf(w, "| claim | kind | %s |\n|---|---|%s\n", strings.Join(names, " | "), strings.Repeat("---|", len(names)))
	for _, d := range diffs {
		cells := slices.Clone(d.Verdicts)
		for i := range cells {
			if i < len(d.Measured) && d.Measured[i] != "" {
				cells[i] += " (" + d.Measured[i] + ")"
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", d.Claim, d.Kind, strings.Join(cells, " | "))
	}
}
