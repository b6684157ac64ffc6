package framework

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/onsi/ginkgo/v2"

	"github.com/kubeproof/kubeproof/kube/metrics"
)

// GrowthTrials is how often LeastGrowth repeats an action.
const GrowthTrials = 3

// LeastGrowth runs act GrowthTrials times and returns, per counter, the
// least it grew around one run (between a scrape before and one after).
// The least, since anything else going on in the cluster at the time can
// only add to a count: a counter another spec also moves still shows what
// one act does.
func LeastGrowth(ctx context.Context, what string, act func() error, scrape func(context.Context) (metrics.Samples, error), counters ...func(metrics.Samples) float64) []int {
	ginkgo.GinkgoHelper()
	return LeastGrowthSettled(ctx, what, act, scrape, nil, counters...)
}

// settleWindow bounds how long LeastGrowthSettled scrapes again for a
// component to finish what it does after the act was seen done.
const settleWindow = 5 * time.Second

// LeastGrowthSettled is LeastGrowth for work a component finishes after the
// act is seen done (a scheduler counts a binding once the API server has
// answered it, after a watch may have shown the bound Pod): the scrape
// after is repeated, every 50 ms for at most settleWindow, until settled
// says the counters are complete. If they never are, the last scrape
// counts, and the counter that did not move shows it.
func LeastGrowthSettled(ctx context.Context, what string, act func() error, scrape func(context.Context) (metrics.Samples, error),
	settled func(before, after metrics.Samples) bool, counters ...func(metrics.Samples) float64) []int {
	ginkgo.GinkgoHelper()
	return leastGrowth(ctx, what, nil, act, scrape, settled, counters)
}

// LeastGrowthReady is LeastGrowth with ready run before each trial's first
// scrape: what the act needs in place, whose own requests must not count.
func LeastGrowthReady(ctx context.Context, what string, ready, act func() error, scrape func(context.Context) (metrics.Samples, error), counters ...func(metrics.Samples) float64) []int {
	ginkgo.GinkgoHelper()
	return leastGrowth(ctx, what, ready, act, scrape, nil, counters)
}

func leastGrowth(ctx context.Context, what string, ready, act func() error, scrape func(context.Context) (metrics.Samples, error),
	settled func(before, after metrics.Samples) bool, counters []func(metrics.Samples) float64) []int {
	ginkgo.GinkgoHelper()
	least := make([]int, len(counters))
	for t := range GrowthTrials {
		if ready != nil {
			ExpectNoError(ready(), "make ready to "+what)
		}
		before, err := scrape(ctx)
		ExpectNoError(err, "read the metrics before "+what)
		ExpectNoError(act(), what)
		var after metrics.Samples
		_ = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, settleWindow, true, func(ctx context.Context) (bool, error) {
			after, err = scrape(ctx)
			return err == nil && (settled == nil || settled(before, after)), nil
		})
		ExpectNoError(err, "read the metrics after "+what)
		for i, count := range counters {
			if n := int(count(after) - count(before)); t == 0 || n < least[i] {
				least[i] = n
			}
		}
	}
	return least
}

// Counter counts the samples named name with the labels match.
func Counter(name string, match map[string]string) func(metrics.Samples) float64 {
	return func(s metrics.Samples) float64 { return s.Sum(name, match) }
}
