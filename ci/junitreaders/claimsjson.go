// What the checks read of a report directory: claims.json, and the suite
// nodes of specs.json.

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// report is what the checks read of a report directory: claims.json, and
// the suite nodes of specs.json (Ginkgo's JSON report).
type report struct {
	Summary map[string]int `json:"summary"`
	// Kubeproof is the kubeproof that wrote the report: claims.json of
	// releases before test names became claim IDs lacks it.
	Kubeproof *struct {
		Version string `json:"version"`
	} `json:"kubeproof"`
	// Run is the suites' wall clock (claims.json of older releases lacks it).
	Run *struct {
		Seconds float64 `json:"seconds"`
	} `json:"run"`
	Documents []struct {
		Claims []claimResult `json:"claims"`
	} `json:"documents"`
	Specs []specState `json:"specs"`
	// suiteNodes are the suite nodes' types (SynchronizedBeforeSuite, ...)
	// with the worst state each had in any process.
	suiteNodes map[string]string
}

// specState is a spec of claims.json: its ID and Ginkgo state.
type specState struct {
	ID        string    `json:"id"`
	State     string    `json:"state"`
	StartedAt time.Time `json:"startedAt"`
	EndedAt   time.Time `json:"endedAt"`
}

type claimResult struct {
	Claim struct {
		ID        string `json:"id"`
		Title     string `json:"title"`
		Statement string `json:"statement"`
		Source    *struct {
			File string `json:"file"`
			Line int    `json:"line"`
		} `json:"source"`
	} `json:"claim"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
	Specs   []struct {
		ID      string  `json:"id"`
		Seconds float64 `json:"seconds"`
	} `json:"specs"`
}

func loadReport(dir string) (*report, error) {
	var r report
	data, err := os.ReadFile(filepath.Join(dir, "claims.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("claims.json: %w", err)
	}
	data, err = os.ReadFile(filepath.Join(dir, "specs.json"))
	if err != nil {
		return nil, err
	}
	var suites []struct {
		SpecReports []struct {
			LeafNodeType string
			State        string
		}
	}
	if err := json.Unmarshal(data, &suites); err != nil {
		return nil, fmt.Errorf("specs.json: %w", err)
	}
	r.suiteNodes = map[string]string{}
	for _, s := range suites {
		for _, sr := range s.SpecReports {
			if sr.LeafNodeType == "It" {
				continue
			}
			if prev, ok := r.suiteNodes[sr.LeafNodeType]; !ok || prev == "passed" {
				r.suiteNodes[sr.LeafNodeType] = sr.State
			}
		}
	}
	return &r, nil
}

// claimCounts is what claims-junit.xml must count, from claims.json's
// verdicts: every claim a test; refuted ones failures when refutedFails;
// errors errors; those not decided here skipped.
func (r *report) claimCounts(refutedFails bool) Counts {
	var c Counts
	for v, n := range r.Summary {
		for range n {
			c.add(claimResult{Verdict: v}.result(refutedFails))
		}
	}
	return c
}

// result is the JUnit result a verdict must have.
func (c claimResult) result(refutedFails bool) string {
	switch c.Verdict {
	case "refuted":
		if refutedFails {
			return "failure"
		}
	case "error":
		return "error"
	case "not-checkable", "not-testable", "open", "not-run":
		return "skipped"
	}
	return "passed"
}

// specCounts is what junit.xml must count: a test per spec claims.json
// lists (the specs that ran) and one per kind of suite node specs.json has.
func (r *report) specCounts() Counts {
	var c Counts
	for _, s := range r.Specs {
		c.add(stateResult(s.State))
	}
	for _, state := range r.suiteNodes {
		c.add(stateResult(state))
	}
	return c
}

// stateResult is the JUnit result of a Ginkgo spec state, as Ginkgo's JUnit
// reporter writes it.
func stateResult(state string) string {
	switch state {
	case "failed", "timedout", "aborted":
		return "failure"
	case "panicked", "interrupted":
		return "error"
	case "skipped", "pending":
		return "skipped"
	}
	return "passed"
}

// claimSpecsRan is how long at least one spec that decided a claim was
// running: the union of their spans in claims.json.
func (r *report) claimSpecsRan() float64 {
	decided := map[string]bool{}
	for _, d := range r.Documents {
		for _, c := range d.Claims {
			for _, s := range c.Specs {
				decided[s.ID] = true
			}
		}
	}
	type span struct{ start, end time.Time }
	var spans []span
	for _, s := range r.Specs {
		if decided[s.ID] && !s.StartedAt.IsZero() && s.EndedAt.After(s.StartedAt) {
			spans = append(spans, span{s.StartedAt, s.EndedAt})
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start.Compare(b.start) })
	total := 0.0
	var cur *span
	for i := range spans {
		switch {
		case cur == nil:
			cur = &spans[i]
		case spans[i].start.After(cur.end):
			total += cur.end.Sub(cur.start).Seconds()
			cur = &spans[i]
		case spans[i].end.After(cur.end):
			cur.end = spans[i].end
		}
	}
	if cur != nil {
		total += cur.end.Sub(cur.start).Seconds()
	}
	return total
}
