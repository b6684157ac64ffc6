package expect

import (
	"strings"
	"testing"
)

func TestParseClaimed(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	cases := []struct {
		claimed string
		lo, hi  *float64
		err     string
	}{
		{"2s", f(1000), f(3000), ""},
		{"about 2 s", f(1000), f(3000), ""},
		{"~500ms", f(250), f(750), ""},
		{"1-3s", f(1000), f(3000), ""},
		{"1–3 s", f(1000), f(3000), ""},
		{"5-30 s", f(5000), f(30000), ""},
		{"100 ms ~ 200 ms", f(100), f(200), ""},
		{"100-500 ms", f(100), f(500), ""},
		{"< 1s", nil, f(1000), ""},
		{"under 5 seconds", nil, f(5000), ""},
		{"at most 10s", nil, f(10000), ""},
		{"at least 1.5 min", f(90000), nil, ""},
		{"약 2초", f(1000), f(3000), ""},
		{"1~2초", f(1000), f(2000), ""},
		{"2초 이내", nil, f(2000), ""},
		{"2초 정도", f(1000), f(3000), ""},
		{"1초 이상", f(1000), nil, ""},
		{"~2s", f(1000), f(3000), ""},
		{"1 to 3 s", f(1000), f(3000), ""},
		{"up to 1 min", nil, f(60000), ""},
		{"over 1 min", f(60000), nil, ""},
		{"> 1s", f(1000), nil, ""},
		{"about 1-3 s", f(1000), f(3000), ""},
		{"under 1-3 s", nil, nil, "a range with a bound word"},
		{"수백 밀리초", nil, nil, "not a number"},
		{"수 밀리초", nil, nil, "not a number"},
		{"a few seconds", nil, nil, "not a number"},
		{"500", nil, nil, "no unit"},
		{"3 fortnights", nil, nil, "unknown unit"},
		{"3-1 s", nil, nil, "low end"},
	}
	for _, tc := range cases {
		r, err := ParseClaimed(tc.claimed)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want one saying %q", tc.claimed, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.claimed, err)
			continue
		}
		if !sameBound(r.AtLeast, tc.lo) || !sameBound(r.AtMost, tc.hi) {
			t.Errorf("%q: [%v, %v], want [%v, %v]", tc.claimed, show(r.AtLeast), show(r.AtMost), show(tc.lo), show(tc.hi))
		}
	}
}

func sameBound(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func show(p *float64) any {
	if p == nil {
		return "open"
	}
	return *p
}
