package main

import (
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/internal/cli/bench"
)

// bench.md has a row per measurement with the median, least and most over
// the rounds, and a row per --parallel value the suites ran with.
func TestBenchMarkdownRows(t *testing.T) {
	round := func(up, wall4, wait4, wall1 float64) roundBench {
		return roundBench{UpMs: up, DownMs: 400, PodStartup: bench.Summarize([]float64{2000, 3000}),
			Suites: []suiteBench{{Parallel: 4, WallMs: wall4, FinalWaitMs: wait4}, {Parallel: 1, WallMs: wall1}}}
	}
	res := benchResult{Providers: []providerBench{{Provider: "local", KubernetesVersion: "v1.37.2", Rounds: []roundBench{
		round(6100, 178000, 5200, 260000), round(6300, 179000, 5300, 250000), round(6200, 190000, 5100, 270000),
	}}}}
	md := benchMarkdown(res)
	for _, want := range []string{
		"| kubeproof up | local v1.37.2 | 3 | 6.2 | 6.1 | 6.3 |",
		"| suites, --parallel 4 | local v1.37.2 | 3 | 179.0 | 178.0 | 190.0 |",
		"|   of which the final wait for namespaces (--parallel 4) | local v1.37.2 | 3 | 5.2 | 5.1 | 5.3 |",
		"| suites, --parallel 1 | local v1.37.2 | 3 | 260.0 | 250.0 | 270.0 |",
		"| pod startup p50 | local v1.37.2 | 3 | 2.0 | 2.0 | 2.0 |", // nearest rank: the lower of two
		"| kubeproof down | local v1.37.2 | 3 | 0.400 | 0.400 | 0.400 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("bench.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Index(md, "kubeproof up") > strings.Index(md, "suites, --parallel 4") {
		t.Errorf("rows out of order:\n%s", md)
	}
}
