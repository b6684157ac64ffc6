package trace

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kubeproof/kubeproof/internal/report/chart"
)

func format(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.3f", *v)
}

// WriteTable writes the trace for a terminal: with one run, each stage's
// time, source and note; with several, each stage's p50, p90 and p99.
func WriteTable(w io.Writer, r *Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(r.Runs) == 1 {
		run := r.Runs[0]
		fmt.Fprintf(tw, "%s %s in %s (Pod %s on %s)\n", r.Kind, r.Manifest, run.Namespace, run.Pod, run.Node)
		fmt.Fprintln(tw, "STAGE\tMS\tSOURCE\tNOTE")
		for _, s := range run.Stages {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, format(s.Ms), s.Source, s.Note)
		}
	} else {
		fmt.Fprintf(tw, "%s %s, %d runs: milliseconds from the request's receipt\n", r.Kind, r.Manifest, len(r.Runs))
		fmt.Fprintln(tw, "STAGE\tP50\tP90\tP99\tRUNS\tSOURCE")
		for _, p := range r.Summary {
			if p.N == 0 {
				fmt.Fprintf(tw, "%s\t—\t—\t—\t0\t%s\n", p.Stage, SourceNone)
				continue
			}
			fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%d\t%s\n", p.Stage, p.P50, p.P90, p.P99, p.N, p.Source)
		}
	}
	return tw.Flush()
}

// WriteJSON writes the whole result.
func WriteJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Chart draws the timeline: a bar per stage to its time (the p50 with
// several runs, over a band from p50 to p99).
func Chart(r *Result) string {
	var rows []chart.Row
	caption := "milliseconds from the API server's receipt of the create, log scale"
	if len(r.Runs) == 1 {
		for _, s := range r.Runs[0].Stages {
			row := chart.Row{Label: s.Name, Note: "not timed"}
			if s.Ms != nil {
				row.Value, row.HasValue = *s.Ms, true
				row.ValueTitle = fmt.Sprintf("%s ms (%s)", format(s.Ms), s.Source)
			}
			rows = append(rows, row)
		}
	} else {
		caption += fmt.Sprintf("; bar: p50 over %d runs, band: p50 to p99", len(r.Runs))
		for _, p := range r.Summary {
			row := chart.Row{Label: p.Stage, Note: "not timed"}
			if p.N > 0 {
				row.Value, row.HasValue = p.P50, true
				row.Lo, row.Hi = p.P50, p.P99
				row.ValueTitle = fmt.Sprintf("p50 %.3f ms (%s)", p.P50, p.Source)
				row.BandTitle = fmt.Sprintf("p50 %.3f – p99 %.3f ms over %d runs", p.P50, p.P99, p.N)
			}
			rows = append(rows, row)
		}
	}
	return chart.LogBars("creation timeline of "+r.Manifest, caption+" ("+r.Provider+" provider)", rows)
}

// HTML is a page with the chart and the table, for a browser.
func HTML(r *Result) string {
	var table strings.Builder
	_ = WriteTable(&table, r)
	return "<!doctype html><meta charset=\"utf-8\"><title>kubeproof trace " + html.EscapeString(r.Manifest) + "</title>" +
		"<body style=\"font-family:sans-serif\"><h1>kubeproof trace: " + html.EscapeString(r.Manifest) + "</h1>" +
		Chart(r) + "<pre>" + html.EscapeString(table.String()) + "</pre></body>\n"
}
