package report

import (
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/coverage"
	"github.com/kubeproof/kubeproof/internal/judge"
)

// Line is one unit of a document (a line of prose, or a fenced block), in
// the document's order, with what decided it in this run: the verdicts of
// the claims that quote it, the verdicts of the claims it restates, or why
// no cluster can test it. A reviewer reads the document annotated.
type Line struct {
	// First and Last are its line numbers in the document (equal for a
	// line of prose).
	First int  `json:"first"`
	Last  int  `json:"last"`
	Block bool `json:"block,omitempty"`
	// InBlock: a line inside the block before it, decided on its own
	// (what a diagram says beyond the claims that quote the block).
	InBlock bool `json:"inBlock,omitempty"`
	// Text is the line as written; a block's lines joined by newlines.
	Text string `json:"text"`
	// Decision is what decides it, as docs/sentences.md counts it:
	// claims, restates, not-testable or open.
	Decision coverage.Decision `json:"decision"`
	// Claims quote the line; Restates are the claims it says again.
	Claims   []LineClaim `json:"claims,omitempty"`
	Restates []LineClaim `json:"restates,omitempty"`
	// Reason is why no cluster can test it (or, open, what a claim would
	// take); for a block its claims quote, about the rest of the block.
	Reason string `json:"reason,omitempty"`
	// Verdict is the line's: the verdict its claims (quoting or restated)
	// share, "mixed" when they differ, else not-testable, open or
	// undecided.
	Verdict string `json:"verdict"`
	// Flag is set when a restating line cannot be read as confirmed: it
	// restates a refuted claim, or claims whose verdicts differ.
	Flag string `json:"flag,omitempty"`
}

// LineClaim is a claim a line names, with its verdict in this run (empty
// when the run did not judge it).
type LineClaim struct {
	ID      string        `json:"id"`
	Verdict judge.Verdict `json:"verdict,omitempty"`
}

// Line verdicts beyond the claims' own.
const (
	// Mixed: the line's claims have different verdicts.
	Mixed = "mixed"
	// LineOpen and LineUndecided: no claim decides the line yet.
	LineOpen      = string(coverage.Open)
	LineUndecided = string(coverage.Undecided)
)

// LineVerdicts are the line verdicts in report order.
var LineVerdicts = func() []string {
	var out []string
	for _, v := range judge.Verdicts {
		if string(v) == LineOpen {
			continue // an open claim's verdict is the open line's, listed below
		}
		out = append(out, string(v))
		if v == judge.Refuted {
			out = append(out, Mixed)
		}
	}
	return append(out, LineOpen, LineUndecided)
}()

// AddLines gives each document of the report whose text docs holds its
// lines, decided by the catalog's claims and the notes of notes, and
// counts them; documents without a text (a user's claims file) keep
// their claims only.
func (r *Report) AddLines(cat *claims.Catalog, docs, notes fs.FS) error {
	results := map[string]judge.Result{}
	for _, d := range r.Documents {
		for _, res := range d.Claims {
			results[res.Claim.ID] = res
		}
	}
	r.LineSummary, r.LineCounts = nil, nil
	for i := range r.Documents {
		d := &r.Documents[i]
		text, ok, err := coverage.LoadDocumentText(docs, notes, d.File)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		units, _ := coverage.Decide(text, cat)
		d.Lines = documentLines(units, results)
		counts := coverage.CountLines(units)
		d.LineCounts = &counts
		d.LineSummary = map[string]int{}
		for _, l := range d.Lines {
			d.LineSummary[l.Verdict]++
		}
		if r.LineCounts == nil {
			r.LineCounts, r.LineSummary = &coverage.LineCounts{}, map[string]int{}
		}
		addCounts(r.LineCounts, counts)
		for v, n := range d.LineSummary {
			r.LineSummary[v] += n
		}
	}
	return nil
}

func addCounts(sum *coverage.LineCounts, c coverage.LineCounts) {
	sum.Units += c.Units
	sum.InBlocks += c.InBlocks
	sum.Quoted += c.Quoted
	sum.Restating += c.Restating
	sum.NotTestable += c.NotTestable
	sum.Open += c.Open
	sum.Undecided += c.Undecided
}

// documentLines decides each unit with the run's verdicts.
func documentLines(units []coverage.DecidedUnit, results map[string]judge.Result) []Line {
	named := func(ids []string) []LineClaim {
		var out []LineClaim
		for _, id := range ids {
			out = append(out, LineClaim{ID: id, Verdict: results[id].Verdict})
		}
		return out
	}
	var out []Line
	for _, u := range units {
		l := Line{First: u.First, Last: u.Last, Block: u.Block, Text: strings.Join(u.Lines, "\n"),
			Decision: u.Decision(), Claims: named(u.Claims)}
		if u.Note != nil {
			l.Restates, l.Reason = named(u.Note.Restates), u.Note.Reason()
		}
		if l.Reason == "" {
			l.Reason = untestableReason(u.Claims, results)
		}
		decide(&l)
		out = append(out, l)
		for _, in := range u.Inner {
			il := Line{First: in.Line, Last: in.Line, InBlock: true, Text: in.Text, Decision: in.Note.Decision(),
				Restates: named(in.Note.Restates), Reason: in.Note.Reason()}
			decide(&il)
			out = append(out, il)
		}
	}
	return out
}

// untestableReason is, for a line whose claims are all not testable, why
// (each claim's reason, once).
func untestableReason(ids []string, results map[string]judge.Result) string {
	var reasons []string
	for _, id := range ids {
		res, ok := results[id]
		if !ok || res.Verdict != judge.NotTestable {
			return ""
		}
		if !slices.Contains(reasons, res.Reason) {
			reasons = append(reasons, res.Reason)
		}
	}
	return strings.Join(reasons, "; ")
}

// decide sets the line's verdict from the claims it names, and flags a
// restating line that cannot be read as confirmed.
func decide(l *Line) {
	all := append(slices.Clone(l.Claims), l.Restates...)
	if len(all) == 0 {
		l.Verdict = string(l.Decision)
		return
	}
	l.Verdict = lineVerdict(all)
	if len(l.Restates) == 0 {
		return
	}
	var refuted []string
	for _, c := range l.Restates {
		if c.Verdict == judge.Refuted {
			refuted = append(refuted, c.ID)
		}
	}
	switch {
	case len(refuted) > 0:
		l.Flag = fmt.Sprintf("restates %s, which the cluster refuted: the line says what the cluster did not do", strings.Join(refuted, ", "))
	case decidedDiffer(l.Restates):
		var parts []string
		for _, c := range l.Restates {
			parts = append(parts, fmt.Sprintf("%s %s", c.ID, verdictOrUnjudged(c.Verdict)))
		}
		l.Flag = "restates claims whose verdicts differ (" + strings.Join(parts, ", ") + "): it says more than one thing, or not quite what they say"
	}
}

// decidedDiffer says the claims decided (confirmed, conditional, refuted,
// or not testable whatever the cluster) do not all share one verdict. A
// claim this run did not run, could not check on this cluster or got an
// error on, or that is open (no check yet), says nothing about the line
// yet, and a timing claim's
// measurement (within, faster, slower) is a number beside the behaviour,
// not a verdict on it: neither makes a line say more than one thing.
func decidedDiffer(cs []LineClaim) bool {
	var decided []LineClaim
	for _, c := range cs {
		switch c.Verdict {
		case "", judge.NotRun, judge.NotCheckable, judge.Error, judge.Open, judge.Within, judge.Faster, judge.Slower:
		default:
			decided = append(decided, c)
		}
	}
	return len(decided) > 1 && lineVerdict(decided) == Mixed
}

// lineVerdict is the verdict the claims share, or Mixed.
func lineVerdict(cs []LineClaim) string {
	set := map[string]bool{}
	for _, c := range cs {
		set[verdictOrUnjudged(c.Verdict)] = true
	}
	if len(set) == 1 {
		return slices.Collect(maps.Keys(set))[0]
	}
	return Mixed
}

// verdictOrUnjudged names a claim the run did not judge as not run.
func verdictOrUnjudged(v judge.Verdict) string {
	if v == "" {
		return string(judge.NotRun)
	}
	return string(v)
}

// Numbers are the line's numbers: "12", or "15-21" for a block.
func (l Line) Numbers() string {
	if l.Last > l.First {
		return fmt.Sprintf("%d-%d", l.First, l.Last)
	}
	return fmt.Sprint(l.First)
}

// TheRest reports whether the line's note speaks of what its claims leave
// (a block its claims quote in part).
func (l Line) TheRest() bool { return len(l.Claims) > 0 && l.Decision != coverage.Quoted }
