// Package report writes the verdicts of a run: claims.json (a stable,
// documented schema for tools), claims.md (a table per document, fit for a
// CI job summary), claims.html (the same, self-contained, with charts where
// there are numbers) and a short summary for the terminal.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/coverage"
	"github.com/kubeproof/kubeproof/claims/record"
	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/buildinfo"
	"github.com/kubeproof/kubeproof/internal/judge"
)

// SchemaVersion names the claims.json format (docs/claims.md). v2: timing
// claims' verdicts are within, faster or slower (v1 called them confirmed
// or refuted), and documents carry their lines.
const SchemaVersion = "kubeproof.io/claims/v2"

// Report is the content of claims.json.
type Report struct {
	SchemaVersion string    `json:"schemaVersion"`
	GeneratedAt   time.Time `json:"generatedAt"`
	// Kubeproof is the kubeproof that wrote this report: its version and
	// commit (absent in reports of older releases).
	Kubeproof *buildinfo.Build `json:"kubeproof,omitempty"`
	// Run is the suites' wall clock and the kubeproof that ran them (absent
	// when no spec ran, and in reports of older releases).
	Run *RunWindow `json:"run,omitempty"`
	// JudgedFrom is the report directory of the run this report judged
	// again (kubeproof report); empty for the run's own report.
	JudgedFrom string `json:"judgedFrom,omitempty"`
	// Partial says why the report covers only part of the run (it was
	// interrupted); empty for a complete run.
	Partial string         `json:"partial,omitempty"`
	Cluster Cluster        `json:"cluster"`
	Summary map[string]int `json:"summary"`
	// LineSummary counts the lines of every document by their verdict
	// (LineVerdicts), LineCounts by what decides them; unset when no
	// document's text is known.
	LineSummary map[string]int       `json:"lineSummary,omitempty"`
	LineCounts  *coverage.LineCounts `json:"lineCounts,omitempty"`
	// Components say what the run saw each part of the cluster do, what it
	// did not see within its window, and which claims about it were
	// refuted: on a broken cluster, where the fault is.
	Components []Component      `json:"components,omitempty"`
	Documents  []DocumentResult `json:"documents"`
	// Specs are the specs that ran, with all the evidence they recorded.
	Specs []judge.SpecResult `json:"specs"`
	// RefutedFails: claims-junit.xml shows refuted claims as failures
	// (--junit-refuted-as failure), whatever the exit code.
	RefutedFails bool `json:"-"`
}

// RunWindow is when the specs ran: from the first spec process's start to
// the last one's end, as Ginkgo's clock has it.
type RunWindow struct {
	StartedAt time.Time `json:"startedAt"`
	EndedAt   time.Time `json:"endedAt"`
	// Seconds is EndedAt - StartedAt: the run's wall time, which the test
	// cases' times of claims-junit.xml and junit.xml add up to.
	Seconds float64 `json:"seconds"`
	// Kubeproof is the kubeproof that ran the specs (for a report judged
	// again, the run's; absent when its report did not say).
	Kubeproof *buildinfo.Build `json:"kubeproof,omitempty"`
}

// Cluster describes the cluster the verdicts are about.
type Cluster struct {
	Provider          string               `json:"provider"`
	Name              string               `json:"name"`
	KubernetesVersion string               `json:"kubernetesVersion"`
	Nodes             int                  `json:"nodes"`
	Capabilities      []cluster.Capability `json:"capabilities"`
	// NodeCgroups: how the nodes' cgroups were made (cluster.Info).
	NodeCgroups string `json:"nodeCgroups,omitempty"`
}

// DocumentResult is one document and its claims' results.
type DocumentResult struct {
	File  string `json:"file"`
	Title string `json:"title"`
	URL   string `json:"url,omitempty"`
	// Environment is where the document's numbers were measured, as it
	// names it (the claims file's document.environment).
	Environment string         `json:"environment,omitempty"`
	Summary     map[string]int `json:"summary"`
	Claims      []judge.Result `json:"claims"`
	// Lines are the document's every line in its order, decided (see
	// Line); LineCounts and LineSummary count them by decision and by
	// verdict. Empty when kubeproof has no text of the document.
	Lines       []Line               `json:"lines,omitempty"`
	LineCounts  *coverage.LineCounts `json:"lineCounts,omitempty"`
	LineSummary map[string]int       `json:"lineSummary,omitempty"`
}

// Component is one part of the cluster as the run saw it.
type Component struct {
	Name string `json:"name"`
	// Seen is what it was seen doing (each with how often).
	Seen []string `json:"seen,omitempty"`
	// NotSeen is what it was expected to do and was not seen doing within
	// the observation window.
	NotSeen []string `json:"notSeen,omitempty"`
	// Refuted are the IDs of refuted claims about it.
	Refuted []string `json:"refuted,omitempty"`
}

// Broken reports whether the run saw the component fail at something.
func (c Component) Broken() bool { return len(c.NotSeen) > 0 }

// New assembles the report of a run's results on the cluster info describes.
func New(docs []claims.Document, results []judge.Result, run judge.Run, info *cluster.Info) Report {
	build := buildinfo.Current()
	r := Report{SchemaVersion: SchemaVersion, GeneratedAt: time.Now().UTC(), Kubeproof: &build, Summary: counts(results)}
	if !run.Start.IsZero() && run.End.After(run.Start) {
		r.Run = &RunWindow{StartedAt: run.Start.UTC(), EndedAt: run.End.UTC(), Seconds: run.End.Sub(run.Start).Seconds(), Kubeproof: &build}
	}
	for _, id := range slices.Sorted(maps.Keys(run.Specs)) {
		r.Specs = append(r.Specs, run.Specs[id])
	}
	r.Components = components(run, r.Specs, results)
	if info != nil {
		r.Cluster = Cluster{Provider: info.Provider, Name: info.Name, KubernetesVersion: info.KubernetesVersion,
			Nodes: len(info.Nodes), Capabilities: info.Capabilities, NodeCgroups: info.NodeCgroups}
	}
	for _, d := range docs {
		dr := DocumentResult{File: d.File, Title: d.Title, URL: d.URL, Environment: d.Environment}
		for _, res := range results {
			if res.Claim.Document == d.File {
				dr.Claims = append(dr.Claims, res)
			}
		}
		if len(dr.Claims) == 0 {
			continue
		}
		dr.Summary = counts(dr.Claims)
		r.Documents = append(r.Documents, dr)
	}
	return r
}

// components gathers the notes of the suite and the specs by component,
// and the refuted claims about each; components the run saw fail come
// first.
func components(run judge.Run, specs []judge.SpecResult, results []judge.Result) []Component {
	type tally struct {
		order []string
		n     map[string]int
	}
	add := func(t *tally, what string) {
		if t.n == nil {
			t.n = map[string]int{}
		}
		if t.n[what] == 0 {
			t.order = append(t.order, what)
		}
		t.n[what]++
	}
	seen, notSeen := map[string]*tally{}, map[string]*tally{}
	get := func(m map[string]*tally, name string) *tally {
		if m[name] == nil {
			m[name] = &tally{}
		}
		return m[name]
	}
	notes := append([]record.ComponentNote(nil), run.Suite...)
	for _, s := range specs {
		notes = append(notes, s.Components...)
	}
	names := map[string]bool{}
	for _, n := range notes {
		names[n.Component] = true
		if n.Saw {
			add(get(seen, n.Component), n.What)
		} else {
			add(get(notSeen, n.Component), n.What)
		}
	}
	refuted := map[string][]string{}
	for _, res := range results {
		if res.Verdict == judge.Refuted {
			names[res.Claim.Component] = true
			refuted[res.Claim.Component] = append(refuted[res.Claim.Component], res.Claim.ID)
		}
	}
	render := func(t *tally) []string {
		if t == nil {
			return nil
		}
		var out []string
		for _, w := range t.order {
			if t.n[w] > 1 {
				out = append(out, fmt.Sprintf("%s (×%d)", w, t.n[w]))
			} else {
				out = append(out, w)
			}
		}
		return out
	}
	var out []Component
	for _, name := range slices.Sorted(maps.Keys(names)) {
		out = append(out, Component{Name: name, Seen: render(seen[name]), NotSeen: render(notSeen[name]), Refuted: refuted[name]})
	}
	slices.SortStableFunc(out, func(a, b Component) int {
		rank := func(c Component) int {
			switch {
			case c.Broken():
				return 0
			case len(c.Refuted) > 0:
				return 1
			}
			return 2
		}
		return rank(a) - rank(b)
	})
	return out
}

func counts(rs []judge.Result) map[string]int {
	out := map[string]int{}
	for v, n := range judge.Summarize(rs) {
		out[string(v)] = n
	}
	return out
}

// Write writes claims.json, claims.md, claims.html and claims-junit.xml
// into dir.
func Write(dir string, r Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create report directory: %w", err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode claims.json: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "claims.json"), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write claims.json: %w", err)
	}
	junit := func(w io.Writer, r Report) error { return JUnit(w, r, r.RefutedFails) }
	for name, render := range map[string]func(io.Writer, Report) error{"claims.md": Markdown, "claims.html": HTML, "claims-junit.xml": junit} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		if err := render(f, r); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", name, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

// Load reads the claims.json of the report directory dir.
func Load(dir string) (Report, error) {
	var r Report
	data, err := os.ReadFile(filepath.Join(dir, "claims.json"))
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("%s: %w", filepath.Join(dir, "claims.json"), err)
	}
	return r, nil
}

// Terminal prints the verdict counts and every claim that is not confirmed.
func Terminal(w io.Writer, r Report) {
	fmt.Fprintf(w, "\nClaims on %s cluster %q (Kubernetes %s):\n", r.Cluster.Provider, r.Cluster.Name, r.Cluster.KubernetesVersion)
	if r.Cluster.NodeCgroups != "" {
		fmt.Fprintf(w, "  node cgroups: %s\n", r.Cluster.NodeCgroups)
	}
	if r.Partial != "" {
		fmt.Fprintf(w, "  PARTIAL: %s\n", r.Partial)
	}
	for _, v := range judge.Verdicts {
		if n := r.Summary[string(v)]; n > 0 {
			fmt.Fprintf(w, "  %-14s %d\n", v, n)
		}
	}
	if r.LineCounts != nil {
		var parts []string
		for _, v := range LineVerdicts {
			if n := r.LineSummary[v]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, v))
			}
		}
		fmt.Fprintf(w, "  lines of the documents: %s\n    by verdict: %s\n", r.LineCounts, strings.Join(parts, ", "))
		for _, d := range r.Documents {
			for _, l := range d.Lines {
				if l.Flag != "" {
					fmt.Fprintf(w, "  %-14s %s line %s: %s\n", "RE-READ", d.File, l.Numbers(), l.Flag)
				}
			}
		}
	}
	for _, c := range r.Components {
		if c.Broken() {
			fmt.Fprintf(w, "  %-14s not seen: %s\n", c.Name, strings.Join(c.NotSeen, "; "))
		}
	}
	for _, sp := range r.Specs {
		if sp.Flaky {
			fmt.Fprintf(w, "  %-14s %s passed only at attempt %d\n", "FLAKY", sp.ID, sp.Attempts)
		}
	}
	for _, d := range r.Documents {
		for _, res := range d.Claims {
			switch res.Verdict {
			case judge.Refuted, judge.Conditional, judge.Error, judge.Faster, judge.Slower:
				fmt.Fprintf(w, "  %-11s %-22s %s\n", res.Verdict, res.Claim.ID, res.Reason)
			}
		}
	}
}
