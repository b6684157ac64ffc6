package expect

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Range is the range of milliseconds a timing claim's number is taken as;
// a nil bound is open.
type Range struct {
	AtLeast *float64
	AtMost  *float64
}

// Tolerance is how far a single number reaches either way when it is taken
// as a range: n is taken as [n/2, 1.5n], the same order within half, as
// docs/claims.md says of timing claims written by hand. A document that
// gives one number does not mean that exact number of milliseconds.
const Tolerance = 0.5

// unitMillis is every unit a claimed number may carry, in milliseconds
// (evidence of timing specs is in milliseconds: framework.Millis).
var unitMillis = map[string]float64{
	"µs": 0.001, "us": 0.001, "microsecond": 0.001, "microseconds": 0.001, "마이크로초": 0.001,
	"ms": 1, "msec": 1, "msecs": 1, "millisecond": 1, "milliseconds": 1, "밀리초": 1,
	"s": 1000, "sec": 1000, "secs": 1000, "second": 1000, "seconds": 1000, "초": 1000,
	"m": 60000, "min": 60000, "mins": 60000, "minute": 60000, "minutes": 60000, "분": 60000,
	"h": 3600000, "hour": 3600000, "hours": 3600000, "시간": 3600000,
}

// The words around a number that say which side of it the document means,
// or that it is approximate (which a single number is anyway).
var (
	atMostPrefixes  = []string{"at most", "up to", "less than", "under", "below", "within", "no more than", "<=", "≤", "<"}
	atLeastPrefixes = []string{"at least", "more than", "over", "above", "no less than", ">=", "≥", ">"}
	approxPrefixes  = []string{"about", "around", "approximately", "approx.", "roughly", "some", "대략", "약", "≈", "~"}
	atMostSuffixes  = []string{"이내", "이하", "미만", "or less", "at most"}
	atLeastSuffixes = []string{"이상", "초과", "or more", "at least"}
	approxSuffixes  = []string{"정도", "가량", "내외", "쯤", "or so"}
)

var claimedRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)\s*([^\s0-9~\-–—.]*)\s*(?:(?:-|–|—|~|to)\s*([0-9]+(?:\.[0-9]+)?)\s*([^\s0-9]*))?$`)

// ParseClaimed reads a timing claim's number as written ("2s", "about 2
// s", "~500ms", "1-3s", "1–3 s", "100 ms ~ 200 ms", "< 1s", "under 5
// seconds", "at most 10s", "약 2초", "1~2초", "2초 이내") as the range of
// milliseconds it is taken as: a range as written, a bound as that bound,
// and a single number n as [n/2, 1.5n] (Tolerance). A number needs its
// unit; words without a number ("수 밀리초", "a few seconds") are an
// error, as nothing can be measured against them.
func ParseClaimed(claimed string) (Range, error) {
	s := strings.ToLower(strings.TrimSpace(claimed))
	s = strings.ReplaceAll(s, "～", "~")
	s = strings.ReplaceAll(s, ",", "")
	side := ""
	for changed := true; changed; {
		changed = false
		for _, p := range []struct {
			words []string
			side  string
			pre   bool
		}{{atMostPrefixes, "atMost", true}, {atLeastPrefixes, "atLeast", true}, {approxPrefixes, "", true},
			{atMostSuffixes, "atMost", false}, {atLeastSuffixes, "atLeast", false}, {approxSuffixes, "", false}} {
			for _, w := range p.words {
				rest, ok := strings.CutPrefix(s, w)
				if !p.pre {
					rest, ok = strings.CutSuffix(s, w)
				}
				if ok && rest != s {
					s, changed = strings.TrimSpace(rest), true
					if p.side != "" {
						side = p.side
					}
				}
			}
		}
	}
	m := claimedRE.FindStringSubmatch(s)
	if m == nil {
		return Range{}, fmt.Errorf("claimed %q is not a number with a unit (e.g. \"2s\", \"1-3 s\", \"< 500ms\", \"약 2초\")", claimed)
	}
	lo, hiText, loUnit, hiUnit := m[1], m[3], m[2], m[4]
	if hiText == "" {
		return single(claimed, lo, loUnit, side)
	}
	if side != "" {
		return Range{}, fmt.Errorf("claimed %q: a range with a bound word: write either the range or the bound", claimed)
	}
	if loUnit == "" {
		loUnit = hiUnit
	}
	low, err := millis(claimed, lo, loUnit)
	if err != nil {
		return Range{}, err
	}
	high, err := millis(claimed, hiText, hiUnit)
	if err != nil {
		return Range{}, err
	}
	if low > high {
		return Range{}, fmt.Errorf("claimed %q: the range's low end is above its high end", claimed)
	}
	return Range{AtLeast: &low, AtMost: &high}, nil
}

// single is the range of one number: a bound when a word says which side,
// else the number within Tolerance.
func single(claimed, number, unit, side string) (Range, error) {
	n, err := millis(claimed, number, unit)
	if err != nil {
		return Range{}, err
	}
	switch side {
	case "atMost":
		return Range{AtMost: &n}, nil
	case "atLeast":
		return Range{AtLeast: &n}, nil
	}
	low, high := n*(1-Tolerance), n*(1+Tolerance)
	return Range{AtLeast: &low, AtMost: &high}, nil
}

// millis is number in unit, in milliseconds.
func millis(claimed, number, unit string) (float64, error) {
	f, err := strconv.ParseFloat(number, 64)
	if err != nil {
		return 0, fmt.Errorf("claimed %q: %w", claimed, err)
	}
	if unit == "" {
		return 0, fmt.Errorf("claimed %q: %s has no unit (ms, s, min, 초, 밀리초...)", claimed, number)
	}
	per, ok := unitMillis[unit]
	if !ok {
		return 0, fmt.Errorf("claimed %q: unknown unit %q (ms, s, min, 초, 밀리초...)", claimed, unit)
	}
	return f * per, nil
}

// WithRange is a copy of es whose withinClaimed expectations hold r.
func WithRange(es []Expectation, r Range) []Expectation {
	if es == nil {
		return nil
	}
	out := make([]Expectation, len(es))
	for i, e := range es {
		if e.WithinClaimed {
			e.AtLeast, e.AtMost = r.AtLeast, r.AtMost
		}
		out[i] = e
	}
	return out
}
