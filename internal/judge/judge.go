package judge

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/probe"
	"github.com/kubeproof/kubeproof/contract/cluster"
)

// Result is a claim with its verdict and why.
type Result struct {
	Claim        claims.Claim  `json:"claim"`
	Verdict      Verdict       `json:"verdict"`
	Reason       string        `json:"reason"`
	Condition    string        `json:"condition,omitempty"`
	Observations []Observation `json:"observations,omitempty"`
	// Specs are the claim's specs that ran; their evidence is in the
	// report's specs section, once.
	Specs []SpecRef `json:"specs,omitempty"`
	// Measurement is a timing claim's measured value beside the
	// document's number (set when the value was observed).
	Measurement *Measurement `json:"measurement,omitempty"`
	// Reading names the claim's reading that decided it (claims.Reading),
	// where the cluster lacked what its own needs; empty for its own.
	Reading string `json:"reading,omitempty"`
}

// Claims gives every claim its verdict from the specs' results on the cluster
// described by info.
func Claims(cs []claims.Claim, specs map[string]SpecResult, info *cluster.Info) []Result {
	out := make([]Result, 0, len(cs))
	for _, c := range cs {
		out = append(out, judge(c, specs, info))
	}
	return out
}

func judge(c claims.Claim, specs map[string]SpecResult, info *cluster.Info) Result {
	// withinClaimed ranges are judged as the atLeast/atMost they stand
	// for; the result keeps the claim as written.
	r := judgeFacts(c.WithClaimedRanges(), specs, info)
	if c.Kind == claims.Timing {
		r = measured(r, specs)
	}
	r.Claim = c
	if r.Verdict == NotCheckable && lacks(info, c.Requires) != "" {
		r = byReading(c, r, specs, info)
	}
	if d := droppedFields(r, specs); d != "" {
		r.Reason += "; " + d
	}
	return r
}

// droppedFields says which fields of a probe's manifests the API server
// dropped, for a claim its probes decided: a field behind a disabled
// feature gate is dropped, not refused, and the claim may be about the
// object without it.
func droppedFields(r Result, specs map[string]SpecResult) string {
	if len(r.Specs) == 0 || r.Verdict == NotRun {
		return ""
	}
	var parts []string
	for _, ref := range r.Specs {
		steps, ok := specs[ref.ID].Evidence[probe.StepsEvidence].(map[string]any)
		if !ok {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(steps)) {
			step, _ := steps[name].(map[string]any)
			if list, _ := step["dropped"].([]any); len(list) > 0 {
				parts = append(parts, fmt.Sprintf("step %s of %s: %s", name, ref.ID, show(list)))
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "beware: the API server dropped fields of the manifests (as it drops a field behind a disabled feature gate, without refusing the object): " + strings.Join(parts, "; ")
}

// judgeFacts holds a claim's expectations against the evidence.
func judgeFacts(c claims.Claim, specs map[string]SpecResult, info *cluster.Info) Result {
	r := Result{Claim: c}
	if c.Open != "" {
		r.Verdict, r.Reason = Open, c.Open
		return r
	}
	if !c.Testable() {
		r.Verdict, r.Reason = NotTestable, c.NotTestable
		return r
	}
	var ran []SpecResult
	for _, id := range c.Specs {
		if s, ok := specs[id]; ok {
			ran = append(ran, s)
			r.Specs = append(r.Specs, SpecRef{ID: s.ID, State: s.State, Message: s.Message, Seconds: s.Seconds})
		}
	}
	for _, capability := range c.Requires {
		if info != nil && !info.Has(capability) {
			r.Verdict, r.Reason = NotCheckable, info.Missing(capability)
			return r
		}
	}
	if len(ran) == 0 {
		r.Verdict, r.Reason = NotRun, "none of its specs ran in this run ("+strings.Join(c.Specs, ", ")+")"
		return r
	}
	allSkipped := true
	for _, s := range ran {
		allSkipped = allSkipped && s.skipped()
	}
	if allSkipped {
		r.Verdict, r.Reason = NotCheckable, "skipped: "+ran[0].Message
		return r
	}

	obs, missing := evaluate(c.Expect, ran)
	r.Observations = append(obs, explain(c.Context, ran)...)
	if len(failing(obs)) == 0 {
		if missing != "" {
			r.Verdict, r.Reason = missingVerdict(c, missing, ran, specs)
			return r
		}
		r.Verdict, r.Reason = Confirmed, "observed "+joinObs(obs, true)
		return r
	}
	// What was observed contradicts the claim (even if a spec stopped
	// before it observed the rest). Does it hold under a condition?
	var notUnder []string
	for _, alt := range c.Conditional {
		altObs, altMissing := evaluate(alt.Expect, ran)
		switch {
		case altMissing == "" && allHold(altObs):
			r.Verdict, r.Condition = Conditional, alt.Condition
			r.Reason = fmt.Sprintf("holds only %s: %s; in general %s", alt.Condition, joinObs(altObs, true), joinObs(obs, false))
			r.Observations = append(r.Observations, altObs...)
			return r
		case altMissing != "" && len(failing(altObs)) == 0:
			// The condition could be the answer, but it was not observed:
			// the claim cannot be called refuted.
			v, why := missingVerdict(c, altMissing, ran, specs)
			if v == Error {
				r.Verdict, r.Reason = Error, why
				return r
			}
			r.Verdict = NotCheckable
			r.Reason = fmt.Sprintf("in general %s; whether it holds %s was not observed: %s", joinObs(obs, false), alt.Condition, why)
			return r
		}
		// The condition did not hold either: what was seen of it stays in
		// the reason, so that a reader sees why it is no answer.
		r.Observations = append(r.Observations, altObs...)
		if failed := joinObs(altObs, false); failed != "" {
			notUnder = append(notUnder, fmt.Sprintf("nor %s: %s", alt.Condition, failed))
		}
	}
	r.Verdict, r.Reason = Refuted, "the cluster did otherwise: "+joinObs(obs, false)
	if len(notUnder) > 0 {
		r.Reason += "; " + strings.Join(notUnder, "; ")
	}
	return r
}

// missingVerdict explains evidence no spec recorded: its spec did not run
// in this run, skipped, stopped on an unmet precondition, or failed.
func missingVerdict(c claims.Claim, missing string, ran []SpecResult, specs map[string]SpecResult) (Verdict, string) {
	if absent := notRan(c.Specs, specs); len(absent) > 0 {
		return NotRun, fmt.Sprintf("evidence %s comes from spec %s, which did not run in this run", missing, strings.Join(absent, ", "))
	}
	return missingEvidence(missing, ran)
}

// notRan lists the named specs that have no result.
func notRan(ids []string, specs map[string]SpecResult) []string {
	var out []string
	for _, id := range ids {
		if _, ok := specs[id]; !ok {
			out = append(out, id)
		}
	}
	return out
}
