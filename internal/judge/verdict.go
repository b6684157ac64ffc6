// Package judge turns what a run's specs observed (their evidence, in
// Ginkgo's JSON report) into a verdict per claim: confirmed, refuted,
// conditional, the measurements of timing claims, not checkable, not
// testable, error, not run. It lives beside the reports, not in the spec
// side (claims), because no spec judges: specs record, the CLI
// judges after the run, and `kubeproof report` judges old runs again.
package judge

import (
	"github.com/onsi/ginkgo/v2/types"
)

// Verdict is the judge's answer for one claim.
type Verdict string

const (
	// Confirmed: the cluster did what the document says.
	Confirmed Verdict = "confirmed"
	// Refuted: the cluster did otherwise; the observations show what.
	Refuted Verdict = "refuted"
	// Conditional: true only under a condition, which the result names.
	Conditional Verdict = "conditional"
	// NotCheckable: this cluster lacks what the check needs.
	NotCheckable Verdict = "not-checkable"
	// NotTestable: no cluster can test the sentence.
	NotTestable Verdict = "not-testable"
	// Open: a cluster could test the sentence, but no check exists yet;
	// the reason says what check is missing. Not a failure.
	Open Verdict = "open"
	// Error: the check could not run to the point of observing.
	Error Verdict = "error"
	// NotRun: none of the claim's specs ran (filtered out).
	NotRun Verdict = "not-run"

	// The verdicts of timing claims, which are measurements, not facts: a
	// document's number is a fact of its author's machine and cluster, so
	// being faster or slower than it says nothing wrong about the document
	// (and never fails a run). Within: the measured value lies in the
	// document's range; Faster: below it; Slower: above it.
	Within Verdict = "within"
	Faster Verdict = "faster"
	Slower Verdict = "slower"
)

// Verdicts in report order.
var Verdicts = []Verdict{Confirmed, Refuted, Conditional, Within, Faster, Slower, NotCheckable, NotTestable, Open, Error, NotRun}

// Measured reports whether the verdict is one of a timing claim's
// measurements (within, faster, slower).
func (v Verdict) Measured() bool { return v == Within || v == Faster || v == Slower }

// Interrupted rewrites the verdicts of an interrupted run: a claim whose
// specs did not run, or were stopped before they observed its evidence, is
// not run because of the interruption (not an error, not a finding).
func Interrupted(rs []Result) []Result {
	out := make([]Result, len(rs))
	for i, r := range rs {
		if r.Verdict == NotRun || r.Verdict == Error {
			for _, s := range r.Specs {
				if s.State == types.SpecStateInterrupted.String() || s.State == types.SpecStateAborted.String() || r.Verdict == NotRun {
					r.Verdict, r.Reason = NotRun, "not run: the run was interrupted before this claim was observed ("+r.Reason+")"
					break
				}
			}
			if len(r.Specs) == 0 {
				r.Verdict, r.Reason = NotRun, "not run: the run was interrupted before its specs ran"
			}
		}
		out[i] = r
	}
	return out
}

// Summary counts verdicts.
type Summary map[Verdict]int

// Summarize counts the results' verdicts.
func Summarize(rs []Result) Summary {
	s := Summary{}
	for _, r := range rs {
		s[r.Verdict]++
	}
	return s
}
