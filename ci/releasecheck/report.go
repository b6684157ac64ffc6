package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/contract/cluster"

	"github.com/kubeproof/kubeproof/internal/judge"
	"github.com/kubeproof/kubeproof/internal/report"
)

// decides are the verdicts that decide a claim: the cluster said yes, no,
// under a condition, or how fast.
var decides = []judge.Verdict{judge.Confirmed, judge.Refuted, judge.Conditional, judge.Within, judge.Faster, judge.Slower}

// checkReport prints how many claims the run decided and what kept the
// others not checkable (their reasons, by what they lacked), and fails on
// an error verdict or on fewer claims decided than minDecided percent.
func checkReport(dir string, minDecided float64) error {
	rep, err := report.Load(dir)
	if err != nil {
		return err
	}
	total, decided := 0, 0
	for v, n := range rep.Summary {
		total += n
		if slices.Contains(decides, judge.Verdict(v)) {
			decided += n
		}
	}
	if total == 0 {
		return errors.New("the report holds no claims")
	}
	share := 100 * float64(decided) / float64(total)
	var counts []string
	for _, v := range slices.Sorted(maps.Keys(rep.Summary)) {
		counts = append(counts, fmt.Sprintf("%s %d", v, rep.Summary[v]))
	}
	fmt.Printf("releasecheck: %d of %d claims decided (%.0f%%): %s\n", decided, total, share, strings.Join(counts, ", "))
	why := map[string]int{}
	for _, d := range rep.Documents {
		for _, c := range d.Claims {
			if c.Verdict == judge.NotCheckable {
				why[lacking(c.Reason)]++
			}
		}
	}
	for _, r := range slices.SortedFunc(maps.Keys(why), func(a, b string) int { return why[b] - why[a] }) {
		fmt.Printf("releasecheck:   not checkable, %3d: %s\n", why[r], r)
	}
	if n := rep.Summary[string(judge.Error)]; n > 0 {
		return fmt.Errorf("%d claims judged error", n)
	}
	if share < minDecided {
		return fmt.Errorf("%.0f%% of the claims decided, want at least %.0f%%", share, minDecided)
	}
	return nil
}

// lacking sums up a not-checkable reason by what the cluster lacked: the
// capability it names (cluster.Capabilities; RegistryPull's reason names
// kubeproof's images too, which the nodes have), else the images.
func lacking(reason string) string {
	for _, c := range cluster.Capabilities {
		if strings.Contains(reason, "capability "+string(c)) || strings.Contains(reason, "requires "+string(c)) {
			return string(c)
		}
	}
	if strings.Contains(reason, "kubeproof's images") {
		return "kubeproof's images"
	}
	if len(reason) > 100 {
		reason = reason[:100] + "..."
	}
	return reason
}
