package bench

import (
	"os"
	"testing"
)

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

func TestPeakRSSOfThisProcess(t *testing.T) {
	mib, err := PeakRSSMiB(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if mib <= 0 || mib > 1<<20 {
		t.Errorf("peak RSS %v MiB", mib)
	}
	if self := SelfPeakRSSMiB(); self <= 0 {
		t.Errorf("getrusage self: %v MiB", self)
	}
	if _, err := PeakRSSMiB(-1); err == nil {
		t.Errorf("no error for pid -1")
	}
}
