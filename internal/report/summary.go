package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubeproof/kubeproof/internal/judge"
)

// The job summary (GitHub's $GITHUB_STEP_SUMMARY) takes at most 1 MiB per
// step and drops what is larger whole: the summary is bounded whatever the
// run, by the rows it lists and the length of each cell, and cut at a line
// under MaxSummaryBytes should that still not be enough.
const (
	// MaxSummaryBytes is the most Summary writes.
	MaxSummaryBytes = 256 << 10
	// summaryRows is how many refuted (and error) claims it lists.
	summaryRows = 50
	// summaryCell is the most runes of a reason it shows.
	summaryCell = 300
)

// Summary writes a short Markdown summary of the report for a CI job's
// page: the cluster, the verdict counts, the claims in error and the
// refuted ones (the first summaryRows of each, reasons cut short), and
// where the whole report is: link (the uploaded artifact, or the run's
// page), else the report directory dir.
func Summary(w io.Writer, r Report, link, dir string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## kubeproof: %s cluster %q, Kubernetes %s\n\n", r.Cluster.Provider, r.Cluster.Name, r.Cluster.KubernetesVersion)
	if r.Partial != "" {
		fmt.Fprintf(&b, "**Partial report:** %s\n\n", sumCell(r.Partial))
	}
	b.WriteString("| verdict | claims |\n| --- | ---: |\n")
	total := 0
	for _, v := range judge.Verdicts {
		if n := r.Summary[string(v)]; n > 0 {
			fmt.Fprintf(&b, "| %s | %d |\n", v, n)
			total += n
		}
	}
	fmt.Fprintf(&b, "| **all** | **%d** |\n\n", total)
	for _, list := range []struct {
		verdict judge.Verdict
		title   string
	}{
		{judge.Error, "In error: kubeproof could not decide these (exit code 13)"},
		{judge.Refuted, "Refuted: the cluster did otherwise"},
	} {
		var rows []string
		for _, d := range r.Documents {
			for _, res := range d.Claims {
				if res.Verdict == list.verdict {
					rows = append(rows, fmt.Sprintf("| %s | %s | %s |\n", sumCell(res.Claim.ID), sumCell(d.File), sumCell(res.Reason)))
				}
			}
		}
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(&b, "### %s (%d)\n\n| claim | document | reason |\n| --- | --- | --- |\n", list.title, len(rows))
		for i, row := range rows {
			if i == summaryRows {
				fmt.Fprintf(&b, "\n… and %d more: see claims.md in the report.\n", len(rows)-summaryRows)
				break
			}
			b.WriteString(row)
		}
		b.WriteString("\n")
	}
	switch {
	case link != "":
		fmt.Fprintf(&b, "The whole report (claims.md, claims.html, claims.json, JUnit): [%s](%s)\n", sumCell(link), link)
	case dir != "":
		fmt.Fprintf(&b, "The whole report (claims.md, claims.html, claims.json, JUnit) is in `%s`.\n", sumCell(dir))
	}
	if k := r.Kubeproof; k != nil {
		fmt.Fprintf(&b, "\n<sub>kubeproof %s, commit %s</sub>\n", sumCell(k.Version), sumCell(short(k.Commit)))
	}
	out := b.String()
	if len(out) > MaxSummaryBytes {
		cut := strings.LastIndex(out[:MaxSummaryBytes-200], "\n")
		out = out[:cut+1] + "\n… (cut to stay within the job summary's limit: see the whole report)\n"
	}
	_, err := io.WriteString(w, out)
	return err
}

// sumCell is text fit for a Markdown table cell on one line, at most
// summaryCell runes.
func sumCell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.ReplaceAll(s, "|", `\|`)
	if r := []rune(s); len(r) > summaryCell {
		s = string(r[:summaryCell]) + "…"
	}
	return s
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	if commit == "" {
		return "unknown"
	}
	return commit
}
