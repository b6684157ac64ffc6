package framework

import (
	"context"

	"github.com/onsi/ginkgo/v2"

	"github.com/kubeproof/kubeproof/framework/metrics"
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
	least := make([]int, len(counters))
	for t := range GrowthTrials {
		before, err := scrape(ctx)
		ExpectNoError(err, "read the metrics before "+what)
		ExpectNoError(act(), what)
		after, err := scrape(ctx)
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
