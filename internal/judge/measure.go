package judge

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/claims/expect"
)

// Measurement is what a timing claim's number was measured as here.
type Measurement struct {
	// Evidence is the path of the measured value (a median when the spec
	// took several samples).
	Evidence string `json:"evidence"`
	// Claimed is the document's number as written; Low and High the range
	// it is taken as, in the evidence's unit (milliseconds).
	Claimed string   `json:"claimed"`
	Low     *float64 `json:"low,omitempty"`
	High    *float64 `json:"high,omitempty"`
	// Value is the measured value: the median of N samples, whose spread
	// is Min to Max, when the spec sampled (N > 0); else one value.
	Value float64  `json:"value"`
	Min   *float64 `json:"min,omitempty"`
	Max   *float64 `json:"max,omitempty"`
	N     int      `json:"n,omitempty"`
	// Over is what the value was measured over, when its evidence names
	// it (a link field beside the measured value's, as a pull's time
	// names the link to the registry): the same number means something
	// else over another link.
	Over string `json:"over,omitempty"`
}

// measured turns a timing claim's verdict into a measurement: confirmed
// is within the document's range; refuted, when only its ranges failed,
// faster or slower than it. A timing claim refuted by another kind of
// expectation stays refuted: that is a fact, not a number.
func measured(r Result, specs map[string]SpecResult) Result {
	var rangeObs *Observation
	var rangeExp expect.Expectation
	for i, e := range r.Claim.Expect {
		if e.AtLeast == nil && e.AtMost == nil {
			continue
		}
		if i < len(r.Observations) && r.Observations[i].Found {
			rangeObs, rangeExp = &r.Observations[i], e
		}
		break
	}
	if rangeObs == nil {
		return r
	}
	value, ok := toFloat(rangeObs.Observed)
	if !ok {
		return r
	}
	m := &Measurement{Evidence: rangeObs.lhs(), Claimed: r.Claim.Claimed, Low: rangeExp.AtLeast, High: rangeExp.AtMost, Value: value}
	// A median's siblings are its spread: framework.Samples records
	// median, min, max and n side by side.
	if parent, field, ok := cutLast(rangeExp.Evidence); ok && field == "median" {
		for _, s := range specs {
			if !slices.Contains(r.Claim.Specs, s.ID) {
				continue
			}
			if n, ok := lookup(s.Evidence, parent+".n"); ok {
				f, _ := toFloat(n)
				m.N = int(f)
				if v, ok := lookup(s.Evidence, parent+".min"); ok {
					if f, ok := toFloat(v); ok {
						m.Min = &f
					}
				}
				if v, ok := lookup(s.Evidence, parent+".max"); ok {
					if f, ok := toFloat(v); ok {
						m.Max = &f
					}
				}
				break
			}
		}
	}
	m.Over = measuredOver(rangeExp.Evidence, r.Claim.Specs, specs)
	r.Measurement = m
	switch r.Verdict {
	case Confirmed:
		r.Verdict, r.Reason = Within, "measured "+m.String()+", within the document's "+m.documented()
	case Refuted:
		for _, o := range failing(r.Observations) {
			if o.Evidence != rangeExp.Evidence || o.Want != rangeExp.Want() {
				return r // another expectation failed: a fact, not a measurement
			}
		}
		if rangeExp.AtLeast != nil && value < *rangeExp.AtLeast {
			r.Verdict, r.Reason = Faster, "measured "+m.String()+", faster than the document's "+m.documented()
		} else {
			r.Verdict, r.Reason = Slower, "measured "+m.String()+", slower than the document's "+m.documented()
		}
	}
	return r
}

// measuredOver is the link field of the evidence the measured value is
// part of (pulledTiming.link for pulledTiming.pullMs.median), if the
// claim's specs recorded one.
func measuredOver(evidence string, claimSpecs []string, specs map[string]SpecResult) string {
	name, _, _ := strings.Cut(evidence, ".")
	for _, s := range specs {
		if !slices.Contains(claimSpecs, s.ID) {
			continue
		}
		if v, ok := lookup(s.Evidence, name+".link"); ok {
			if link, ok := v.(string); ok {
				return link
			}
		}
	}
	return ""
}

// String is the measured value with its spread, and what it was measured
// over.
func (m Measurement) String() string {
	s := fmt.Sprintf("%s = %s", m.Evidence, short(m.Value))
	if m.N > 0 {
		s = fmt.Sprintf("%s = %s (median of %d", m.Evidence, short(m.Value), m.N)
		if m.Min != nil && m.Max != nil {
			s += fmt.Sprintf(", spread %s-%s", short(*m.Min), short(*m.Max))
		}
		s += ")"
	}
	if m.Over != "" {
		s += " over " + m.Over
	}
	return s
}

// short rounds a measured value for reading: a measurement's last digits
// are noise.
func short(f float64) string {
	switch a := math.Abs(f); {
	case a >= 100:
		return num(math.Round(f))
	case a >= 1:
		return num(math.Round(f*10) / 10)
	}
	return num(math.Round(f*100) / 100)
}

// toFloat reads a number decoded from JSON.
func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// documented is the document's number and the range it is taken as.
func (m Measurement) documented() string {
	var rng string
	switch {
	case m.Low != nil && m.High != nil:
		rng = num(*m.Low) + "-" + num(*m.High)
	case m.Low != nil:
		rng = "≥ " + num(*m.Low)
	case m.High != nil:
		rng = "≤ " + num(*m.High)
	}
	if m.Claimed == "" {
		return rng
	}
	return fmt.Sprintf("%s (taken as %s)", m.Claimed, rng)
}

// cutLast splits a dotted evidence path at its last dot.
func cutLast(path string) (parent, field string, ok bool) {
	i := strings.LastIndex(path, ".")
	if i < 0 {
		return "", "", false
	}
	return path[:i], path[i+1:], true
}
