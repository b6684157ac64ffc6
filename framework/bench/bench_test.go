package bench

import "testing"

func TestSummarize(t *testing.T) {
	if d := Summarize(nil); d.N != 0 {
		t.Errorf("empty: %+v", d)
	}
	vals := []float64{5, 1, 4, 2, 3}
	d := Summarize(vals)
	if d.N != 5 || d.Mean != 3 || d.P50 != 3 || d.P99 != 5 || d.Max != 5 {
		t.Errorf("got %+v", d)
	}
	if vals[0] != 5 {
		t.Errorf("Summarize reordered its input")
	}
}
