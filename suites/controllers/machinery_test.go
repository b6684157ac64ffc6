package controllers

import "testing"

// The retry rule decides from the intervals seen, both ways: a backoff that
// doubles grows; a controller retrying at one pace, or too few intervals
// to tell backoff from noise, does not.
func TestGrowing(t *testing.T) {
	for _, c := range []struct {
		name string
		ms   []float64
		want bool
	}{
		{"doubling after noisy first tries (kind, v1.37.2)", []float64{56.7, 96.3, 15.4, 20.4, 87.3, 176.9, 337.7, 649.8, 1288.0}, true},
		{"a busy machine's slow first try", []float64{718, 132, 359, 613, 2592, 5100}, true},
		{"one pace", []float64{100, 100, 100, 100, 100, 100, 100, 100}, false},
		{"five intervals only", []float64{718, 132, 359, 613, 2592}, false},
		// kind in CI: an event-triggered sync (67 ms) among the backoff's
		// waits; one doubling more decides it.
		{"ended at the first second (kind, CI)", []float64{246, 178, 207, 122, 600, 67, 338, 1275}, false},
		{"one doubling later", []float64{246, 178, 207, 122, 600, 67, 338, 1275, 2550}, true},
	} {
		if got := growing(c.ms); got != c.want {
			t.Errorf("%s: growing(%v) = %v, want %v", c.name, c.ms, got, c.want)
		}
	}
}
