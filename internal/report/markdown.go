package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/internal/judge"
)

var verdictMark = map[judge.Verdict]string{
	judge.Confirmed:    "✅ confirmed",
	judge.Refuted:      "❌ refuted",
	judge.Conditional:  "⚠️ conditional",
	judge.Within:       "⏱️ within the document's number",
	judge.Faster:       "⏱️ faster than the document",
	judge.Slower:       "⏱️ slower than the document",
	judge.NotCheckable: "⏭️ not checkable here",
	judge.NotTestable:  "➖ not testable",
	judge.Open:         "❔ open",
	judge.Error:        "💥 error",
	judge.NotRun:       "· not run",
}

// lineMark names a line's verdict.
func lineMark(v string) string {
	switch v {
	case Mixed:
		return "🔀 mixed"
	case LineOpen:
		return "❔ open"
	case LineUndecided:
		return "❓ undecided"
	}
	if m, ok := verdictMark[judge.Verdict(v)]; ok {
		return m
	}
	return v
}

// shortMark is a verdict beside a claim's ID in a line's decision.
func shortMark(v judge.Verdict) string {
	switch v {
	case judge.Within, judge.Faster, judge.Slower:
		return "⏱️ " + string(v)
	case "":
		return "· not run"
	}
	mark, _, _ := strings.Cut(verdictMark[v], " ")
	return mark
}

// anchor is the id of a claim's row, which a line's decision links to.
func anchor(id string) string { return "claim-" + strings.ToLower(id) }

// Markdown writes the summary, then each document twice: line by line with
// each line's decision (the document read annotated, top to bottom), and
// as a table of its claims with the evidence that decided them.
func Markdown(w io.Writer, r Report) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "# kubeproof: documented claims checked against a real cluster\n\n")
	fmt.Fprintf(b, "Cluster: provider **%s**, name `%s`, Kubernetes **%s**, %d node(s). Generated %s.\n\n",
		r.Cluster.Provider, r.Cluster.Name, r.Cluster.KubernetesVersion, r.Cluster.Nodes, r.GeneratedAt.Format("2006-01-02 15:04:05 MST"))
	if r.Cluster.NodeCgroups != "" {
		fmt.Fprintf(b, "Node cgroups: %s.\n\n", r.Cluster.NodeCgroups)
	}
	if r.Partial != "" {
		fmt.Fprintf(b, "> **Partial report**: %s.\n\n", r.Partial)
	}
	for _, sp := range r.Specs {
		if sp.Flaky {
			fmt.Fprintf(b, "> **Flaky**: spec `%s` passed only at attempt %d; its claims' verdicts come from that attempt.\n\n", sp.ID, sp.Attempts)
		}
	}
	writeSummary(b, r)
	if len(r.Components) > 0 {
		b.WriteString("\n## What the run saw each component do\n\n")
		b.WriteString("| component | seen | not seen within its window | refuted claims about it |\n| --- | --- | --- | --- |\n")
		for _, c := range r.Components {
			name := c.Name
			if c.Broken() {
				name = "**" + name + "** ❗"
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", name, cell(strings.Join(c.Seen, "\n")), cell(strings.Join(c.NotSeen, "\n")), strings.Join(c.Refuted, ", "))
		}
	}
	var failed []judge.SpecResult
	for _, s := range r.Specs {
		if s.State != "passed" && s.State != "skipped" {
			failed = append(failed, s)
		}
	}
	if len(failed) > 0 {
		b.WriteString("\n## Specs that did not pass\n\n| spec | state | why | namespace dump |\n| --- | --- | --- | --- |\n")
		for _, s := range failed {
			fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", s.ID, s.State, cell(s.Message), cell(s.Dump))
		}
	}
	writeTimingTable(b, r)
	for _, d := range r.Documents {
		fmt.Fprintf(b, "\n## %s — %s\n\n", d.File, cell(d.Title))
		if d.URL != "" {
			fmt.Fprintf(b, "Document: %s\n\n", d.URL)
		}
		if d.Environment != "" {
			fmt.Fprintf(b, "The document's numbers were measured on: %s.\n\n", cell(d.Environment))
		}
		if len(d.Lines) > 0 {
			writeLines(b, d)
		}
		fmt.Fprintf(b, "\n### The claims of %s, with their evidence\n\n", d.File)
		b.WriteString("| claim | sentence | verdict | evidence |\n| --- | --- | --- | --- |\n")
		for _, res := range d.Claims {
			c := res.Claim
			sentence := fmt.Sprintf("%s<br>*%s*<br><sub>%s · %s · %s</sub>", cell(c.Quote), cell(c.Statement), cell(c.Section), c.Component, c.Kind)
			verdict := verdictMark[res.Verdict]
			if res.Condition != "" {
				verdict += "<br>" + cell(res.Condition)
			}
			if c.Note != "" {
				verdict += "<br><sub>" + cell(c.Note) + "</sub>"
			}
			if f := flipsText(c); f != "" {
				verdict += "<br><sub>" + cell(f) + "</sub>"
			}
			fmt.Fprintf(b, "| <a id=\"%s\"></a>`%s` | %s | %s | %s |\n", anchor(c.ID), c.ID, sentence, verdict, cell(evidenceText(res)))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSummary counts the claims and, when the documents' texts are known,
// every line, by verdict.
func writeSummary(b *strings.Builder, r Report) {
	if r.LineCounts == nil {
		b.WriteString("| verdict | claims |\n| --- | --- |\n")
		for _, v := range judge.Verdicts {
			if n := r.Summary[string(v)]; n > 0 {
				fmt.Fprintf(b, "| %s | %d |\n", verdictMark[v], n)
			}
		}
		return
	}
	b.WriteString("| verdict | claims | lines of the documents |\n| --- | --- | --- |\n")
	for _, v := range LineVerdicts {
		claimsN, linesN := r.Summary[v], r.LineSummary[v]
		if claimsN == 0 && linesN == 0 {
			continue
		}
		fmt.Fprintf(b, "| %s | %d | %d |\n", lineMark(v), claimsN, linesN)
	}
	fmt.Fprintf(b, "\nLines: %s A line's verdict is its claims' (those that quote it, or that it restates); 🔀 mixed when they differ.\n", r.LineCounts)
	flagged := 0
	for _, d := range r.Documents {
		for _, l := range d.Lines {
			if l.Flag != "" {
				flagged++
			}
		}
	}
	if flagged > 0 {
		fmt.Fprintf(b, "\n> ⚑ **%d line(s) restate a refuted claim, or claims whose verdicts differ**: marked ⚑ below; read them again.\n", flagged)
	}
}

// writeTimingTable lists the timing claims' measurements beside the
// documents' numbers and where each was measured.
func writeTimingTable(b *strings.Builder, r Report) {
	var rows []string
	for _, d := range r.Documents {
		for _, res := range d.Claims {
			if res.Claim.Kind != claims.Timing {
				continue
			}
			doc := res.Claim.Claimed
			if d.Environment != "" {
				doc += ", on " + d.Environment
			} else {
				doc += " (the document names no environment)"
			}
			measured := res.Reason
			if m := res.Measurement; m != nil {
				measured = measuredText(*m) + " on " + clusterText(r.Cluster)
			}
			rows = append(rows, fmt.Sprintf("| [`%s`](#%s) | %s | %s | %s |", res.Claim.ID, anchor(res.Claim.ID), cell(doc), cell(measured), verdictMark[res.Verdict]))
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n## Timing claims: measurements beside the documents' numbers\n\n")
	b.WriteString("A document's number is a fact of its author's cluster: faster or slower here is a measurement, not a refutation (it does not fail `--fail-on-refuted`).\n\n")
	b.WriteString("| claim | the document | measured here | verdict |\n| --- | --- | --- | --- |\n")
	b.WriteString(strings.Join(rows, "\n") + "\n")
}

// measuredText is a measurement's value and spread, in words.
func measuredText(m judge.Measurement) string {
	if m.N == 0 {
		s := fmt.Sprintf("%s ms (%s)", fmtMs(m.Value), m.Evidence)
		if m.Over != "" {
			s += " over " + m.Over
		}
		return s
	}
	s := fmt.Sprintf("median %s ms of %d", fmtMs(m.Value), m.N)
	if m.Min != nil && m.Max != nil {
		s += fmt.Sprintf(", spread %s-%s ms", fmtMs(*m.Min), fmtMs(*m.Max))
	}
	s += " (" + m.Evidence + ")"
	if m.Over != "" {
		s += " over " + m.Over
	}
	return s
}

// clusterText names the cluster a run measured.
func clusterText(c Cluster) string {
	return fmt.Sprintf("%s cluster %q, Kubernetes %s, %d node(s)", c.Provider, c.Name, c.KubernetesVersion, c.Nodes)
}

func fmtMs(f float64) string {
	switch {
	case f >= 100:
		return fmt.Sprintf("%.0f", f)
	case f >= 1:
		return fmt.Sprintf("%.1f", f)
	}
	return fmt.Sprintf("%.2f", f)
}

// writeLines writes the document line by line with each line's decision.
func writeLines(b *strings.Builder, d DocumentResult) {
	var parts []string
	for _, v := range LineVerdicts {
		if n := d.LineSummary[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", lineMark(v), n))
		}
	}
	fmt.Fprintf(b, "### %s, line by line\n\n%s By verdict: %s.\n\n", d.File, d.LineCounts, strings.Join(parts, " · "))
	b.WriteString("| line | the document | decided |\n| --- | --- | --- |\n")
	for _, l := range d.Lines {
		text := cell(l.Text)
		if l.Block {
			text = "<code>" + codeCell(l.Text) + "</code>"
		}
		if l.InBlock {
			text = "(in the block) <code>" + codeCell(l.Text) + "</code>"
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", l.Numbers(), text, lineDecision(l))
	}
}

// lineDecision is a line's verdict and what decided it, the claims linked
// to their rows.
func lineDecision(l Line) string {
	link := func(cs []LineClaim) string {
		var out []string
		for _, c := range cs {
			out = append(out, fmt.Sprintf("[%s](#%s) %s", c.ID, anchor(c.ID), shortMark(c.Verdict)))
		}
		return strings.Join(out, ", ")
	}
	s := "**" + lineMark(l.Verdict) + "**"
	if l.Flag != "" {
		s = "⚑ " + s
	}
	var parts []string
	if len(l.Claims) > 0 {
		parts = append(parts, "claims "+link(l.Claims))
	}
	switch {
	case len(l.Restates) > 0:
		if len(l.Claims) > 0 {
			parts = append(parts, "the rest restates "+link(l.Restates))
		} else {
			parts = append(parts, "restates "+link(l.Restates))
		}
	case l.Reason != "" && l.TheRest():
		parts = append(parts, "the rest: "+cell(l.Reason))
	case l.Reason != "":
		parts = append(parts, cell(l.Reason))
	}
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, "; ")
	}
	if l.Flag != "" {
		s += "<br>⚑ *" + cell(l.Flag) + "*"
	}
	return s
}

// evidenceText is the reason plus, for timing claims, the document's number
// beside the measured one.
func evidenceText(res judge.Result) string {
	text := res.Reason
	if res.Claim.Kind == claims.Timing && res.Claim.Claimed != "" {
		text = "document: " + res.Claim.Claimed + "; " + text
	}
	return text
}

// cell makes text safe inside a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\r", "")
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "<br>")
}

// codeCell is a code block's text inside a table cell: every character
// that Markdown or HTML would read written as an entity, lines broken.
func codeCell(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '|', '*', '_', '`', '[', ']', '\\', '~', '#':
			fmt.Fprintf(&b, "&#%d;", r)
		case '\n':
			b.WriteString("<br>")
		case '\r':
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
