//go:build !e2e

package podflow

import "testing"

// The slowest step is whichever median is largest, the download or not.
func TestSlowestSteps(t *testing.T) {
	if _, ok := slowestSteps([]applySteps{{applyMs: 100, boundToRunningMs: 900}}); ok {
		t.Error("ranked steps without a pull")
	}
	slowPull := []applySteps{
		{applyMs: 120, toBoundMs: 30, boundToRunningMs: 6500, pullMs: 6000, runningToReadyMs: 200, pulled: true},
		{applyMs: 100, toBoundMs: 20, boundToRunningMs: 7300, pullMs: 7000, runningToReadyMs: 250, pulled: true},
		{applyMs: 90, toBoundMs: 10, boundToRunningMs: 500, runningToReadyMs: 250}, // cached: not ranked
	}
	ev, ok := slowestSteps(slowPull)
	if !ok || ev.Slowest != stepPull || ev.SlowestMs != 6500 || ev.Next != stepContainer || ev.N != 2 {
		t.Errorf("a slow pull: %+v", ev)
	}
	// A fast local registry: the container's start takes longer than the
	// pull, and the download is not the slowest step.
	fastPull := []applySteps{{applyMs: 120, toBoundMs: 30, boundToRunningMs: 900, pullMs: 300, runningToReadyMs: 200, pulled: true}}
	if ev, _ := slowestSteps(fastPull); ev.Slowest != stepContainer || ev.Next != stepPull {
		t.Errorf("a fast pull: %+v", ev)
	}
}
