// Package claimlint checks a user's claims file without a cluster, as
// `claims lint` does and `run` and `report` do before anything runs: its
// schema, its specs (built-in or its own probes), the evidence paths its
// claims read and the types their expectations hold them to, the
// capabilities its probes' observers need, and its quotes against the
// document.
package claimlint

import (
	"fmt"
	"strings"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/probe"
	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/framework"
)

// Document is the text of a user's document and the name it was given by.
type Document struct{ Name, Text string }

// ProblemsOf splits a loading error into its problems, one a line.
func ProblemsOf(err error) []string {
	var out []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" && l != "invalid claims catalog:" {
			out = append(out, l)
		}
	}
	return out
}

// UnknownSpecs says, for each spec a claim names that this binary does not
// have, which claim names it.
func UnknownSpecs(cs []claims.Claim, probes []probe.LoadedProbe) []string {
	specs := map[string]bool{}
	for _, sp := range framework.ListSpecs() {
		specs[sp.ID] = true
	}
	var out []string
	for _, p := range probes {
		if specs[p.ID] {
			out = append(out, fmt.Sprintf("probe %s: the ID is a built-in spec's: choose another", p.ID))
		}
		specs[p.ID] = true
	}
	for _, c := range cs {
		for _, id := range c.Specs {
			if !specs[id] {
				out = append(out, fmt.Sprintf("claim %s names spec %s, which does not exist (see `kubeproof claims specs`)", c.ID, id))
			}
		}
	}
	return out
}

// File checks a user's claims file without a cluster: its schema
// and expectations (as the catalog's), that its specs exist, that every
// evidence path it names is one those specs record, of a type its
// expectation can hold, and, given the document's text, that its quotes
// stand in it. It returns every problem found.
// Advice that does not make the file wrong (a missing header) is returned
// as hints; traps a probe falls into (Traps) as warnings.
func File(path string, doc *Document) (n int, problems, hints, warnings []string) {
	cat, err := claims.LoadAt(fixtures.Claims(), fixtures.ClaimsDir)
	if err != nil {
		return 0, []string{"the built-in catalog: " + err.Error()}, nil, nil
	}
	before, hintsBefore := len(cat.Claims), len(cat.Hints)
	if err := cat.AddFile(path); err != nil {
		return 0, ProblemsOf(err), nil, nil
	}
	own := cat.Claims[before:]
	return len(own), Own(own, cat.Probes, doc), cat.Hints[hintsBefore:], Traps(own, cat.Probes)
}

// ScaffoldQuote is the quote `claims new` writes, for the user to replace:
// left as it is, it quotes nothing of the document.
const ScaffoldQuote = "the sentence of the document, as written"

// Own is claims lint's checks of a user's claims once they loaded:
// specs (built-in or the file's probes), evidence paths and types (through
// the probes' observers too), the capabilities observers need, conditions
// that only restate their claim, two claims reading one fact two ways,
// quotes.
func Own(own []claims.Claim, probes []probe.LoadedProbe, doc *Document) []string {
	problems := UnknownSpecs(own, probes)
	mine := &claims.Catalog{Claims: own, Probes: probes}
	for _, err := range claims.CheckProbeNeeds(mine) {
		problems = append(problems, err.Error())
	}
	decls := append(framework.DeclaredEvidence(), mine.ProbeEvidence()...)
	for _, err := range claims.CheckEvidence(mine, decls) {
		problems = append(problems, err.Error())
	}
	// A conditional verdict names a real condition, and one fact gets one
	// reading: the checks the built-in catalog's tests make.
	for _, err := range claims.CheckConditions(own) {
		problems = append(problems, err.Error())
	}
	for _, err := range claims.CheckConsistency(mine, decls) {
		problems = append(problems, err.Error())
	}
	for _, c := range own {
		switch {
		case doc != nil:
			if err := claims.CheckQuote(doc.Text, doc.Name, c); err != nil {
				problems = append(problems, err.Error())
			}
		case claims.Collapse(c.Quote) == ScaffoldQuote:
			problems = append(problems, fmt.Sprintf("claim %s: the quote is the placeholder `claims new` wrote: quote the document's sentence as written", c.ID))
		}
	}
	return problems
}
