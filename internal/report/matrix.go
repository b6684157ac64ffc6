package report

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/internal/judge"
)

// MatrixSchemaVersion names the matrix.json format.
const MatrixSchemaVersion = "kubeproof.io/matrix/v1"

// Matrix is the verdict of every claim on each of several runs: one per
// Kubernetes release (or provider), made on one machine by `kubeproof
// matrix` or joined from CI jobs' report directories by `report merge`.
type Matrix struct {
	SchemaVersion string      `json:"schemaVersion"`
	GeneratedAt   time.Time   `json:"generatedAt"`
	Runs          []MatrixRun `json:"runs"`
	// Claims are ordered: those whose verdict differs between runs first
	// (behaviour before timing), then the rest by ID.
	Claims []MatrixClaim `json:"claims"`
}

// MatrixRun is one column: a run's cluster and its summary.
type MatrixRun struct {
	Name    string         `json:"name"`
	Dir     string         `json:"dir,omitempty"`
	Cluster Cluster        `json:"cluster"`
	Summary map[string]int `json:"summary"`
	Partial string         `json:"partial,omitempty"`
}

// MatrixClaim is one claim's row: its result in each run, in the order of
// Matrix.Runs (a run that did not judge it has an empty verdict).
type MatrixClaim struct {
	Claim   claims.Claim `json:"claim"`
	Differs bool         `json:"differs"`
	// PartlyDiffers: the verdict is the same everywhere, but a part of the
	// sentence (one deciding observation) held on one run and not on
	// another: e.g. one of two components changed on a release.
	PartlyDiffers bool           `json:"partlyDiffers,omitempty"`
	Results       []MatrixResult `json:"results"`
}

// MatrixResult is a claim's result in one run, with what was observed.
type MatrixResult struct {
	Verdict      judge.Verdict       `json:"verdict,omitempty"`
	Reason       string              `json:"reason,omitempty"`
	Observations []judge.Observation `json:"observations,omitempty"`
}

// NewMatrix lines up the runs' claims; names label the runs' columns.
func NewMatrix(runs []Report, names, dirs []string) Matrix {
	m := Matrix{SchemaVersion: MatrixSchemaVersion, GeneratedAt: time.Now().UTC()}
	rows := map[string]*MatrixClaim{}
	var ids []string
	for i, r := range runs {
		run := MatrixRun{Name: names[i], Cluster: r.Cluster, Summary: r.Summary, Partial: r.Partial}
		if i < len(dirs) {
			run.Dir = dirs[i]
		}
		m.Runs = append(m.Runs, run)
		for _, d := range r.Documents {
			for _, res := range d.Claims {
				row, ok := rows[res.Claim.ID]
				if !ok {
					row = &MatrixClaim{Claim: res.Claim, Results: make([]MatrixResult, len(runs))}
					rows[res.Claim.ID] = row
					ids = append(ids, res.Claim.ID)
				}
				row.Results[i] = MatrixResult{Verdict: res.Verdict, Reason: res.Reason, Observations: res.Observations}
			}
		}
	}
	for _, id := range ids {
		row := rows[id]
		row.Differs = slices.ContainsFunc(row.Results, func(r MatrixResult) bool { return r.Verdict != row.Results[0].Verdict })
		row.PartlyDiffers = !row.Differs && holdsDiffer(row.Results)
		m.Claims = append(m.Claims, *row)
	}
	slices.SortStableFunc(m.Claims, func(a, b MatrixClaim) int {
		if ra, rb := a.rank(), b.rank(); ra != rb {
			return ra - rb
		}
		return strings.Compare(a.Claim.ID, b.Claim.ID)
	})
	return m
}

// rank orders rows: differing behaviour, differing timing, partly
// differing, the same.
func (c MatrixClaim) rank() int {
	switch {
	case c.Differs && c.Claim.Kind != claims.Timing:
		return 0
	case c.Differs:
		return 1
	case c.PartlyDiffers:
		return 2
	}
	return 3
}

// holdsDiffer reports whether a deciding observation (an evidence path
// against one expectation) held in one result and not in another.
func holdsDiffer(results []MatrixResult) bool {
	// One evidence path can be judged against two expectations (a
	// conditional claim's rule and its general case): key on both.
	held := map[string]map[bool]bool{}
	for _, r := range results {
		for _, o := range r.Observations {
			if o.Context || !o.Found {
				continue
			}
			key := o.Evidence + "\x00" + o.Want + "\x00" + o.Says
			if held[key] == nil {
				held[key] = map[bool]bool{}
			}
			held[key][o.Holds] = true
		}
	}
	for _, h := range held {
		if len(h) == 2 {
			return true
		}
	}
	return false
}

// PartlyDiffering are the rows whose verdict is the same in every run but
// one of whose deciding observations is not.
func (m Matrix) PartlyDiffering() []MatrixClaim {
	return m.rows(func(c MatrixClaim) bool { return c.PartlyDiffers })
}

// Differing are the rows whose verdict is not the same in every run.
func (m Matrix) Differing() []MatrixClaim {
	return m.rows(func(c MatrixClaim) bool { return c.Differs })
}

func (m Matrix) rows(keep func(MatrixClaim) bool) []MatrixClaim {
	var out []MatrixClaim
	for _, c := range m.Claims {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

// RunNames names each run by provider and Kubernetes release, and adds the
// directory's name where two runs would otherwise share a name.
func RunNames(runs []Report, dirs []string) []string {
	names := make([]string, len(runs))
	count := map[string]int{}
	for i, r := range runs {
		names[i] = r.Cluster.Provider + " " + r.Cluster.KubernetesVersion
		count[names[i]]++
	}
	for i := range names {
		if count[names[i]] > 1 && i < len(dirs) {
			names[i] += " (" + filepath.Base(dirs[i]) + ")"
		}
	}
	return names
}

// WriteMatrixFiles writes matrix.json, matrix.md and matrix.html into dir.
func WriteMatrixFiles(dir string, m Matrix) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode matrix.json: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "matrix.json"), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write matrix.json: %w", err)
	}
	for name, write := range map[string]func(io.Writer, Matrix) error{"matrix.md": MatrixMarkdown, "matrix.html": MatrixHTML} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		werr := write(f, m)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return fmt.Errorf("write %s: %w", name, werr)
		}
	}
	return nil
}

// MatrixMarkdown writes the differing claims with the deciding evidence on
// each side, then every claim's verdicts as one table.
func MatrixMarkdown(w io.Writer, m Matrix) error {
	names := make([]string, len(m.Runs))
	for i, r := range m.Runs {
		names[i] = r.Name
	}
	fmt.Fprintf(w, "# kubeproof: verdicts across %s\n\n", strings.Join(names, ", "))
	fmt.Fprintf(w, "| run | %s |\n|---|%s\n", strings.Join(verdictNames(), " | "), strings.Repeat("---|", len(judge.Verdicts)))
	for _, r := range m.Runs {
		var cells []string
		for _, v := range judge.Verdicts {
			cells = append(cells, fmt.Sprint(r.Summary[string(v)]))
		}
		fmt.Fprintf(w, "| %s | %s |\n", r.Name, strings.Join(cells, " | "))
	}
	diff := m.Differing()
	fmt.Fprintf(w, "\n## Claims whose verdict differs (%d)\n\n", len(diff))
	if len(diff) == 0 {
		fmt.Fprintf(w, "Every claim has the same verdict on every run.\n")
	}
	for _, c := range diff {
		writeSides(w, names, c)
	}
	partly := m.PartlyDiffering()
	fmt.Fprintf(w, "## Same verdict, but a part of the sentence differs (%d)\n\n", len(partly))
	for _, c := range partly {
		writeSides(w, names, c)
	}
	fmt.Fprintf(w, "## Every claim\n\n| claim | kind | %s |\n|---|---|%s\n", strings.Join(names, " | "), strings.Repeat("---|", len(names)))
	for _, c := range m.Claims {
		var cells []string
		for _, r := range c.Results {
			cells = append(cells, string(orNotRun(r.Verdict)))
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", c.Claim.ID, c.Claim.Kind, strings.Join(cells, " | "))
	}
	return nil
}

// writeSides writes a claim with its verdict and deciding evidence on each
// run.
func writeSides(w io.Writer, names []string, c MatrixClaim) {
	fmt.Fprintf(w, "### %s (%s)\n\n%s\n\n", c.Claim.ID, c.Claim.Kind, c.Claim.Statement)
	for i, r := range c.Results {
		fmt.Fprintf(w, "- **%s**: %s", names[i], orNotRun(r.Verdict))
		if obs := decidingObservations(r); obs != "" {
			fmt.Fprintf(w, ": %s", obs)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

// decidingObservations are the observations that decided a verdict (not the
// context ones), as the reports print them.
func decidingObservations(r MatrixResult) string {
	var parts []string
	for _, o := range r.Observations {
		if !o.Context {
			parts = append(parts, o.String())
		}
	}
	return strings.Join(parts, "; ")
}

func orNotRun(v judge.Verdict) judge.Verdict {
	if v == "" {
		return judge.NotRun
	}
	return v
}

func verdictNames() []string {
	out := make([]string, len(judge.Verdicts))
	for i, v := range judge.Verdicts {
		out[i] = string(v)
	}
	return out
}

// MatrixHTML writes matrix.html, in the look of claims.html.
func MatrixHTML(w io.Writer, m Matrix) error {
	bars := make([]template.HTML, len(m.Runs))
	for i, r := range m.Runs {
		bars[i] = summaryBar(r.Summary)
	}
	return matrixPage.Execute(w, struct {
		Matrix
		Bars      []template.HTML
		Differing []MatrixClaim
		Partly    []MatrixClaim
	}{m, bars, m.Differing(), m.PartlyDiffering()})
}

var matrixPage = template.Must(template.New("matrix").Funcs(pageFuncs).Funcs(template.FuncMap{
	"orNotRun": orNotRun,
	"deciding": decidingObservations,
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>kubeproof matrix</title>
{{style}}</head><body>
<h1>kubeproof: documented claims across releases</h1>
<p>Generated {{.GeneratedAt.Format "2006-01-02 15:04:05 MST"}}.</p>
<table><tr><th>run</th><th>cluster</th><th>verdicts</th></tr>
{{range $i, $r := .Runs}}<tr><td><b>{{$r.Name}}</b>{{if $r.Partial}}<br><small>partial: {{$r.Partial}}</small>{{end}}</td>
<td>provider {{$r.Cluster.Provider}}, Kubernetes {{$r.Cluster.KubernetesVersion}}, {{$r.Cluster.Nodes}} node(s){{if $r.Dir}}<div class="meta">{{$r.Dir}}</div>{{end}}</td>
<td>{{index $.Bars $i}}</td></tr>{{end}}
</table>
<h2>Claims whose verdict differs ({{len .Differing}})</h2>
{{if not .Differing}}<p>Every claim has the same verdict on every run.</p>{{end}}
{{if .Differing}}<table><tr><th>claim</th>{{range .Runs}}<th>{{.Name}}</th>{{end}}</tr>
{{range .Differing}}<tr><td><code>{{.Claim.ID}}</code><div class="statement">{{.Claim.Statement}}</div><div class="meta">{{.Claim.Component}} · {{.Claim.Kind}}</div></td>
{{range .Results}}<td><div class="verdict" style="background:{{color (orNotRun .Verdict)}};padding:2px 4px">{{orNotRun .Verdict}}</div><ul class="obs"><li>{{deciding .}}</li></ul></td>{{end}}</tr>{{end}}
</table>{{end}}
<h2>Same verdict, but a part of the sentence differs ({{len .Partly}})</h2>
{{if .Partly}}<table><tr><th>claim</th>{{range .Runs}}<th>{{.Name}}</th>{{end}}</tr>
{{range .Partly}}<tr><td><code>{{.Claim.ID}}</code><div class="statement">{{.Claim.Statement}}</div><div class="meta">{{.Claim.Component}} · {{.Claim.Kind}}</div></td>
{{range .Results}}<td><div class="verdict" style="background:{{color (orNotRun .Verdict)}};padding:2px 4px">{{orNotRun .Verdict}}</div><ul class="obs"><li>{{deciding .}}</li></ul></td>{{end}}</tr>{{end}}
</table>{{end}}
<h2>Every claim</h2>
<table><tr><th>claim</th><th>kind</th>{{range .Runs}}<th>{{.Name}}</th>{{end}}</tr>
{{range .Claims}}<tr><td><code>{{.Claim.ID}}</code></td><td>{{.Claim.Kind}}</td>
{{range .Results}}<td class="verdict" style="background:{{color (orNotRun .Verdict)}}" title="{{.Reason}}">{{orNotRun .Verdict}}</td>{{end}}</tr>{{end}}
</table>
</body></html>
`))

// MatrixTerminal prints each run's summary and the claims whose verdict
// differs, one line each.
func MatrixTerminal(w io.Writer, m Matrix) {
	for _, r := range m.Runs {
		var parts []string
		for _, v := range judge.Verdicts {
			if n := r.Summary[string(v)]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, v))
			}
		}
		fmt.Fprintf(w, "  %-24s %s\n", r.Name, strings.Join(parts, ", "))
	}
	diff := m.Differing()
	fmt.Fprintf(w, "Claims whose verdict differs between the runs: %d\n", len(diff))
	printRows(w, m, diff)
	partly := m.PartlyDiffering()
	fmt.Fprintf(w, "Claims with the same verdict of which a part differs: %d\n", len(partly))
	printRows(w, m, partly)
}

func printRows(w io.Writer, m Matrix, rows []MatrixClaim) {
	for _, c := range rows {
		var cells []string
		for i, r := range c.Results {
			cells = append(cells, m.Runs[i].Name+" "+string(orNotRun(r.Verdict)))
		}
		fmt.Fprintf(w, "  %-28s %-9s %s\n", c.Claim.ID, c.Claim.Kind, strings.Join(cells, " | "))
	}
}
