package report

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/kubeproof/kubeproof/framework/claims"
	"github.com/kubeproof/kubeproof/internal/cli/chart"
)

// HTML writes a self-contained page (no external assets): the summary as a
// bar, one table per document, and a chart of every timing claim's measured
// value against the document's range.
func HTML(w io.Writer, r Report) error {
	return page.Execute(w, struct {
		Report
		Bar    template.HTML
		Timing template.HTML
	}{r, summaryBar(r.Summary), timingChart(r)})
}

var verdictColor = map[string]string{
	string(claims.Confirmed): "#2e7d32", string(claims.Refuted): "#c62828", string(claims.Conditional): "#ef6c00",
	string(claims.NotCheckable): "#78909c", string(claims.NotTestable): "#b0bec5", string(claims.Error): "#6a1b9a",
	string(claims.NotRun): "#e0e0e0",
}

// summaryBar is a stacked bar of verdict counts.
func summaryBar(summary map[string]int) template.HTML {
	total := 0
	for _, n := range summary {
		total += n
	}
	if total == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<svg width="720" height="56" role="img" aria-label="verdicts">`)
	x := 0.0
	for _, v := range claims.Verdicts {
		n := summary[string(v)]
		if n == 0 {
			continue
		}
		w := 720 * float64(n) / float64(total)
		fmt.Fprintf(&b, `<rect x="%.1f" y="0" width="%.1f" height="28" fill="%s"><title>%s: %d</title></rect>`, x, w, verdictColor[string(v)], v, n)
		if w > 60 {
			fmt.Fprintf(&b, `<text x="%.1f" y="46" font-size="12">%s %d</text>`, x+2, v, n)
		}
		x += w
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// timingChart draws, on a logarithmic millisecond axis, each timing claim's
// documented range (a band) and the measured value (a bar).
func timingChart(r Report) template.HTML {
	type row struct {
		id       string
		measured float64
		lo, hi   float64
	}
	var rows []row
	for _, d := range r.Documents {
		for _, res := range d.Claims {
			if res.Claim.Kind != claims.Timing {
				continue
			}
			for i, o := range res.Observations {
				f, ok := o.Observed.(float64)
				if !ok || i >= len(res.Claim.Expect) {
					continue
				}
				e := res.Claim.Expect[i]
				if e.AtLeast == nil && e.AtMost == nil {
					continue
				}
				rw := row{id: res.Claim.ID, measured: f}
				if e.AtLeast != nil {
					rw.lo = *e.AtLeast
				}
				if e.AtMost != nil {
					rw.hi = *e.AtMost
				}
				rows = append(rows, rw)
				break
			}
		}
	}
	if len(rows) == 0 {
		return ""
	}
	var out []chart.Row
	for _, rw := range rows {
		out = append(out, chart.Row{Label: rw.id, Value: rw.measured, HasValue: true, Lo: rw.lo, Hi: rw.hi,
			ValueTitle: "measured: " + num(rw.measured) + " ms",
			BandTitle:  "document: " + num(rw.lo) + "–" + num(rw.hi) + " ms"})
	}
	var b strings.Builder
	b.WriteString(chart.LogBars("timing claims", "", out))
	b.WriteString(`<p class="legend"><span style="background:#bbdefb">&nbsp;&nbsp;&nbsp;</span> the document's range &nbsp; <span style="background:#0d47a1">&nbsp;&nbsp;&nbsp;</span> measured</p>`)
	return template.HTML(b.String())
}

func num(f float64) string { return fmt.Sprintf("%g", f) }

// pageStyle is the look of every kubeproof HTML report (claims.html,
// matrix.html).
const pageStyle = `<style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;width:100%;margin-bottom:2em}
th,td{border:1px solid #ccc;padding:6px;vertical-align:top;text-align:left;font-size:14px}
th{background:#f5f5f5}.verdict{color:#fff;font-weight:bold;white-space:nowrap}
.quote{font-weight:500}.statement{font-style:italic;color:#444}.meta{color:#777;font-size:12px}
ul.obs{margin:4px 0 0 0;padding-left:18px;font-family:monospace;font-size:12px}.legend{font-size:12px}
</style>`

var pageFuncs = template.FuncMap{
	"color":    func(v claims.Verdict) string { return verdictColor[string(v)] },
	"evidence": evidenceText,
	"style":    func() template.HTML { return pageStyle },
}

var page = template.Must(template.New("claims").Funcs(pageFuncs).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>kubeproof claims</title>
{{style}}</head><body>
<h1>kubeproof: documented claims checked against a real cluster</h1>
<p>Cluster: provider <b>{{.Cluster.Provider}}</b>, name <code>{{.Cluster.Name}}</code>, Kubernetes <b>{{.Cluster.KubernetesVersion}}</b>, {{.Cluster.Nodes}} node(s). Generated {{.GeneratedAt.Format "2006-01-02 15:04:05 MST"}}.{{with .Cluster.NodeCgroups}} Node cgroups: {{.}}.{{end}}</p>
{{if .Partial}}<p style="background:#fff3e0;padding:8px"><b>Partial report</b>: {{.Partial}}.</p>{{end}}
{{.Bar}}
{{if .Components}}<h2>What the run saw each component do</h2>
<table><tr><th>component</th><th>seen</th><th>not seen within its window</th><th>refuted claims about it</th></tr>
{{range .Components}}<tr><td>{{if .Broken}}<b style="color:#c62828">{{.Name}}</b>{{else}}{{.Name}}{{end}}</td>
<td><ul class="obs">{{range .Seen}}<li>{{.}}</li>{{end}}</ul></td><td><ul class="obs">{{range .NotSeen}}<li>{{.}}</li>{{end}}</ul></td>
<td>{{range .Refuted}}<code>{{.}}</code> {{end}}</td></tr>{{end}}
</table>{{end}}
{{if .Timing}}<h2>Timing claims: measured against the documents' numbers</h2>{{.Timing}}{{end}}
{{range .Documents}}
<h2>{{.File}} — {{.Title}}</h2>{{if .URL}}<p>Document: <a href="{{.URL}}">{{.URL}}</a></p>{{end}}
<table><tr><th>claim</th><th>sentence</th><th>verdict</th><th>evidence</th></tr>
{{range .Claims}}<tr>
<td><code>{{.Claim.ID}}</code></td>
<td><div class="quote">{{.Claim.Quote}}</div><div class="statement">{{.Claim.Statement}}</div><div class="meta">{{.Claim.Section}} · {{.Claim.Component}} · {{.Claim.Kind}}</div></td>
<td class="verdict" style="background:{{color .Verdict}}">{{.Verdict}}{{if .Condition}}<br><small>{{.Condition}}</small>{{end}}{{if .Claim.Note}}<br><small class="note">{{.Claim.Note}}</small>{{end}}</td>
<td>{{evidence .}}{{if .Observations}}<ul class="obs">{{range .Observations}}<li>{{.String}}</li>{{end}}</ul>{{end}}</td>
</tr>{{end}}
</table>
{{end}}
</body></html>
`))
