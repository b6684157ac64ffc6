package report

import (
	"fmt"
	"html/template"
	"io"
	"regexp"
	"strings"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/internal/judge"
	"github.com/kubeproof/kubeproof/internal/report/chart"
)

// HTML writes a self-contained page (no external assets): the summary as a
// bar, the timing claims' measurements, and each document line by line
// (every line with its decision) above the table of its claims with their
// evidence. It is laid out for a 1280-1400 px window and for print
// (internal/report's browser test measures it in Chromium).
func HTML(w io.Writer, r Report) error {
	flagged := 0
	for _, d := range r.Documents {
		for _, l := range d.Lines {
			if l.Flag != "" {
				flagged++
			}
		}
	}
	return page.Execute(w, struct {
		Report
		Bar       template.HTML
		Timing    template.HTML
		HasTiming bool
		Flagged   int
	}{r, summaryBar(r.Summary), timingChart(r), hasTiming(r), flagged})
}

func hasTiming(r Report) bool {
	for _, d := range r.Documents {
		for _, res := range d.Claims {
			if res.Claim.Kind == claims.Timing {
				return true
			}
		}
	}
	return false
}

var verdictColor = map[string]string{
	string(judge.Confirmed): "#2e7d32", string(judge.Refuted): "#c62828", string(judge.Conditional): "#ef6c00",
	string(judge.Within): "#1565c0", string(judge.Faster): "#00838f", string(judge.Slower): "#5d4037",
	string(judge.NotCheckable): "#78909c", string(judge.NotTestable): "#b0bec5", string(judge.Error): "#6a1b9a",
	string(judge.NotRun): "#e0e0e0", Mixed: "#ad1457", LineOpen: "#fbc02d", LineUndecided: "#000000",
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
	for _, v := range judge.Verdicts {
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
	var out []chart.Row
	for _, d := range r.Documents {
		for _, res := range d.Claims {
			m := res.Measurement
			if res.Claim.Kind != claims.Timing || m == nil {
				continue
			}
			row := chart.Row{Label: res.Claim.ID, Value: m.Value, HasValue: true,
				ValueTitle: "measured: " + measuredText(*m), BandTitle: "document: " + res.Claim.Claimed}
			if m.Low != nil {
				row.Lo = *m.Low
			}
			if m.High != nil {
				row.Hi = *m.High
			}
			out = append(out, row)
		}
	}
	if len(out) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(chart.LogBars("timing claims", "", out))
	b.WriteString(`<p class="legend"><span style="background:#bbdefb">&nbsp;&nbsp;&nbsp;</span> the document's range &nbsp; <span style="background:#0d47a1">&nbsp;&nbsp;&nbsp;</span> measured here</p>`)
	return template.HTML(b.String())
}

// pageStyle is the look of every kubeproof HTML report (claims.html,
// matrix.html). Tables have a fixed layout with each column's share, and
// long words (evidence paths, URLs) break, so that no column pushes the
// others below their width and the page never outgrows its window.
const pageStyle = `<style>
body{font-family:system-ui,"Noto Sans KR","NanumGothic","Nanum Gothic",sans-serif;margin:1.5em auto;padding:0 1.5em;max-width:1400px;color:#222;box-sizing:border-box}
table{border-collapse:collapse;width:100%;margin-bottom:2em;table-layout:fixed}
th,td{border:1px solid #ccc;padding:6px;vertical-align:top;text-align:left;font-size:14px;overflow-wrap:anywhere;word-break:normal}
th{background:#f5f5f5}
.verdict{color:#fff;font-weight:bold}
td.verdict small,td.verdict .note{font-weight:normal;display:block;margin-top:4px}
.chip{display:inline-block;color:#fff;font-weight:bold;border-radius:3px;padding:1px 6px;font-size:13px;white-space:nowrap}
.chip.light{color:#222}
.quote{font-weight:500}.statement{font-style:italic;color:#444}.meta{color:#777;font-size:12px}
ul.obs{margin:4px 0 0 0;padding-left:18px;font-family:monospace;font-size:12px}.legend{font-size:12px}
pre.block{margin:0;font-size:12px;line-height:1.35;white-space:pre;overflow-x:auto;max-width:100%;background:#fafafa}
tr.flag td{background:#fce4ec}.flag-note{color:#ad1457;font-weight:bold;display:block;margin-top:4px}
tr.inblock td.text{padding-left:2em}
.n{color:#777;font-variant-numeric:tabular-nums}
.decision a{white-space:nowrap}
svg{max-width:100%;height:auto}
col.c-line{width:5.5em}col.c-text{width:56%}col.c-decision{width:auto}
col.c-id{width:11em}col.c-sentence{width:33%}col.c-verdict{width:19%}col.c-evidence{width:auto}
col.c-tclaim{width:12em}col.c-tdoc{width:25%}col.c-tmeasured{width:auto}col.c-tverdict{width:11em}
col.c-comp{width:12em}
@media print{
 body{margin:0;padding:0;max-width:none;font-size:10pt}
 th,td{font-size:9pt;padding:3px}
 pre.block{white-space:pre-wrap;overflow:visible}
 tr{break-inside:avoid}
 h2{break-before:auto;break-after:avoid}
 a{color:inherit;text-decoration:none}
 .verdict,.chip,tr.flag td,th{-webkit-print-color-adjust:exact;print-color-adjust:exact}
 @page{size:A4 landscape;margin:12mm}
}
</style>`

var pageFuncs = template.FuncMap{
	"color":     func(v judge.Verdict) string { return verdictColor[string(v)] },
	"lineColor": func(v string) string { return verdictColor[v] },
	"light": func(v string) bool {
		return v == string(judge.NotRun) || v == string(judge.NotTestable) || v == LineOpen
	},
	"evidence": evidenceText,
	"flips":    flipsText,
	"style":    func() template.HTML { return pageStyle },
	"anchor":   anchor,
	"inline":   inlineMarkdown,
	"lineMark": lineMark,
	"measured": measuredText,
	"cluster":  clusterText,
	"lineVerdicts": func(summary map[string]int) []verdictCount {
		var out []verdictCount
		for _, v := range LineVerdicts {
			if n := summary[v]; n > 0 {
				out = append(out, verdictCount{v, n})
			}
		}
		return out
	},
	"summaryRows": func(r Report) []summaryRow {
		var out []summaryRow
		for _, v := range LineVerdicts {
			c, l := r.Summary[v], r.LineSummary[v]
			if c > 0 || l > 0 {
				out = append(out, summaryRow{v, c, l})
			}
		}
		return out
	},
	"verdictName": func(v judge.Verdict) string {
		if v == "" {
			return string(judge.NotRun)
		}
		return string(v)
	},
}

type verdictCount struct {
	Verdict string
	N       int
}

type summaryRow struct {
	Verdict       string
	Claims, Lines int
}

var (
	boldRE = regexp.MustCompile(`\*\*(.+?)\*\*`)
	codeRE = regexp.MustCompile("`([^`]+)`")
)

// inlineMarkdown renders a document's line: its text escaped, then its
// bold and code spans as such.
func inlineMarkdown(s string) template.HTML {
	h := template.HTMLEscapeString(s)
	h = codeRE.ReplaceAllString(h, "<code>$1</code>")
	h = boldRE.ReplaceAllString(h, "<strong>$1</strong>")
	return template.HTML(h)
}

var page = template.Must(template.New("claims").Funcs(pageFuncs).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>kubeproof claims</title>
{{style}}</head><body>
<h1>kubeproof: documented claims checked against a real cluster</h1>
<p>Cluster: provider <b>{{.Cluster.Provider}}</b>, name <code>{{.Cluster.Name}}</code>, Kubernetes <b>{{.Cluster.KubernetesVersion}}</b>, {{.Cluster.Nodes}} node(s). Generated {{.GeneratedAt.Format "2006-01-02 15:04:05 MST"}}.{{with .Cluster.NodeCgroups}} Node cgroups: {{.}}.{{end}}</p>
{{if .Partial}}<p style="background:#fff3e0;padding:8px"><b>Partial report</b>: {{.Partial}}.</p>{{end}}
{{.Bar}}
{{if .LineCounts}}<table class="summary" style="width:auto;min-width:40%"><tr><th>verdict</th><th>claims</th><th>lines of the documents</th></tr>
{{range summaryRows .Report}}<tr><td><span class="chip{{if light .Verdict}} light{{end}}" style="background:{{lineColor .Verdict}}">{{.Verdict}}</span></td><td class="n">{{.Claims}}</td><td class="n">{{.Lines}}</td></tr>{{end}}
</table>
<p>Lines: {{.LineCounts}} A line's verdict is its claims' (those that quote it, or that it restates); <i>mixed</i> when they differ.
{{if .Flagged}}<br><b class="flag-note">⚑ {{.Flagged}} line(s) restate a refuted claim, or claims whose verdicts differ: marked below; read them again.</b>{{end}}</p>{{end}}
<p>Documents: {{range .Documents}}<a href="#doc-{{.File}}">{{.File}}</a> ({{len .Lines}} lines, {{len .Claims}} claims) &nbsp; {{end}}</p>
{{if .Components}}<h2>What the run saw each component do</h2>
<table class="components"><colgroup><col class="c-comp"><col><col><col style="width:22%"></colgroup>
<tr><th>component</th><th>seen</th><th>not seen within its window</th><th>refuted claims about it</th></tr>
{{range .Components}}<tr><td>{{if .Broken}}<b style="color:#c62828">{{.Name}}</b>{{else}}{{.Name}}{{end}}</td>
<td><ul class="obs">{{range .Seen}}<li>{{.}}</li>{{end}}</ul></td><td><ul class="obs">{{range .NotSeen}}<li>{{.}}</li>{{end}}</ul></td>
<td>{{range .Refuted}}<a href="#{{anchor .}}"><code>{{.}}</code></a> {{end}}</td></tr>{{end}}
</table>{{end}}
{{if .HasTiming}}<h2>Timing claims: measurements beside the documents' numbers</h2>
<p>A document's number is a fact of its author's cluster: faster or slower here is a measurement, not a refutation (it does not fail <code>--fail-on-refuted</code>).</p>
<table class="timing"><colgroup><col class="c-tclaim"><col class="c-tdoc"><col class="c-tmeasured"><col class="c-tverdict"></colgroup>
<tr><th>claim</th><th>the document</th><th>measured here</th><th>verdict</th></tr>
{{range $d := .Documents}}{{range .Claims}}{{if eq .Claim.Kind "timing"}}<tr><td><a href="#{{anchor .Claim.ID}}"><code>{{.Claim.ID}}</code></a></td>
<td>{{.Claim.Claimed}}{{if $d.Environment}}, on {{$d.Environment}}{{else}} <span class="meta">(the document names no environment)</span>{{end}}</td>
<td>{{with .Measurement}}{{measured .}}<div class="meta">on {{cluster $.Cluster}}</div>{{else}}{{.Reason}}{{end}}</td>
<td class="verdict" style="background:{{color .Verdict}}">{{.Verdict}}</td></tr>{{end}}{{end}}{{end}}
</table>
{{.Timing}}{{end}}
{{range .Documents}}
<h2 id="doc-{{.File}}">{{.File}} — {{.Title}}</h2>{{if .URL}}<p>Document: <a href="{{.URL}}">{{.URL}}</a></p>{{end}}
{{if .Environment}}<p>The document's numbers were measured on: {{.Environment}}.</p>{{end}}
{{if .Lines}}<h3>The document, line by line</h3>
<p>{{.LineCounts}} By verdict: {{range lineVerdicts .LineSummary}}<span class="chip{{if light .Verdict}} light{{end}}" style="background:{{lineColor .Verdict}}">{{.Verdict}} {{.N}}</span> {{end}}</p>
<table class="doc"><colgroup><col class="c-line"><col class="c-text"><col class="c-decision"></colgroup>
<tr><th>line</th><th>the document</th><th>decided</th></tr>
{{range .Lines}}<tr class="{{if .Flag}}flag{{end}}{{if .InBlock}} inblock{{end}}"><td class="n">{{.Numbers}}</td>
<td class="text">{{if or .Block .InBlock}}<pre class="block">{{.Text}}</pre>{{else}}{{inline .Text}}{{end}}</td>
<td class="decision"><span class="chip{{if light .Verdict}} light{{end}}" style="background:{{lineColor .Verdict}}">{{if .Flag}}⚑ {{end}}{{.Verdict}}</span>
{{if .Claims}}<div>claims {{range .Claims}}<a href="#{{anchor .ID}}">{{.ID}}</a> <small>({{verdictName .Verdict}})</small> {{end}}</div>{{end}}
{{if .Restates}}<div>{{if .Claims}}the rest {{end}}restates {{range .Restates}}<a href="#{{anchor .ID}}">{{.ID}}</a> <small>({{verdictName .Verdict}})</small> {{end}}</div>{{else if .Reason}}<div class="meta">{{if .TheRest}}the rest: {{end}}{{.Reason}}</div>{{end}}
{{if .Flag}}<span class="flag-note">⚑ {{.Flag}}</span>{{end}}</td></tr>
{{end}}</table>{{end}}
<h3>The claims of {{.File}}, with their evidence</h3>
<table class="claims"><colgroup><col class="c-id"><col class="c-sentence"><col class="c-verdict"><col class="c-evidence"></colgroup>
<tr><th>claim</th><th>sentence</th><th>verdict</th><th>evidence</th></tr>
{{range .Claims}}<tr id="{{anchor .Claim.ID}}">
<td><code>{{.Claim.ID}}</code><div class="meta">{{.Claim.Component}} · {{.Claim.Kind}}</div></td>
<td><div class="quote">{{inline .Claim.Quote}}</div><div class="statement">{{.Claim.Statement}}</div><div class="meta">{{.Claim.Section}}</div></td>
<td class="verdict" style="background:{{color .Verdict}}">{{.Verdict}}{{if .Condition}}<small>{{.Condition}}</small>{{end}}{{if .Claim.Note}}<small class="note">{{.Claim.Note}}</small>{{end}}{{with flips .Claim}}<small class="note">{{.}}</small>{{end}}</td>
<td>{{evidence .}}{{if .Observations}}<ul class="obs">{{range .Observations}}<li>{{.String}}</li>{{end}}</ul>{{end}}</td>
</tr>{{end}}
</table>
{{end}}
</body></html>
`))
