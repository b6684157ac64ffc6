package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubeproof/kubeproof/framework/claims"
)

var verdictMark = map[claims.Verdict]string{
	claims.Confirmed:    "✅ confirmed",
	claims.Refuted:      "❌ refuted",
	claims.Conditional:  "⚠️ conditional",
	claims.NotCheckable: "⏭️ not checkable here",
	claims.NotTestable:  "➖ not testable",
	claims.Error:        "💥 error",
	claims.NotRun:       "· not run",
}

// Markdown writes one table per document: the sentence, its verdict, and the
// evidence that decided it.
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
	b.WriteString("| verdict | claims |\n| --- | --- |\n")
	for _, v := range claims.Verdicts {
		if n := r.Summary[string(v)]; n > 0 {
			fmt.Fprintf(b, "| %s | %d |\n", verdictMark[v], n)
		}
	}
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
	var failed []claims.SpecResult
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
	for _, d := range r.Documents {
		fmt.Fprintf(b, "\n## %s — %s\n\n", d.File, cell(d.Title))
		if d.URL != "" {
			fmt.Fprintf(b, "Document: %s\n\n", d.URL)
		}
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
			fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", c.ID, sentence, verdict, cell(evidenceText(res)))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// evidenceText is the reason plus, for timing claims, the document's number
// beside the measured one.
func evidenceText(res claims.Result) string {
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
