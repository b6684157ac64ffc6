package report

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// span is when something ran.
type span struct{ start, end time.Time }

// wallShares shares wall time among spans that overlap: a second during
// which n of them ran counts 1/n s for each. The shares add up to the time
// covered by at least one span, however many ran at once (a run with four
// spec processes is not four times as long as its wall clock).
func wallShares(spans map[string]span) map[string]float64 {
	type event struct {
		at    time.Time
		key   string
		start bool
	}
	var events []event
	for k, s := range spans {
		events = append(events, event{s.start, k, true}, event{s.end, k, false})
	}
	// Ends before starts at the same instant: a span that ends as another
	// starts does not share that instant with it.
	slices.SortFunc(events, func(a, b event) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		if a.start != b.start {
			if a.start {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.key, b.key)
	})
	// A span of no length has its share too: 0.
	shares := make(map[string]float64, len(spans))
	for k := range spans {
		shares[k] = 0
	}
	active := map[string]bool{}
	var last time.Time
	for _, e := range events {
		if n := len(active); n > 0 {
			each := e.at.Sub(last).Seconds() / float64(n)
			for k := range active {
				shares[k] += each
			}
		}
		last = e.at
		if e.start {
			active[e.key] = true
		} else {
			delete(active, e.key)
		}
	}
	return shares
}

// RepositoryPath is where a claims file is, as CI annotations want it: the
// path relative to the root of the git repository that holds it (found by
// walking up to a .git), or relative to the working directory when no
// repository holds it and it is below; false when it is not on this
// machine (the built-in catalog, run outside kubeproof's checkout) or
// lies outside both.
func RepositoryPath(file string) (string, bool) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", false
	}
	if _, err := os.Stat(abs); err != nil {
		return "", false
	}
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			rel, err := filepath.Rel(dir, abs)
			return filepath.ToSlash(rel), err == nil
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(wd, abs)
	if err != nil || rel == ".." || len(rel) > 2 && rel[:3] == ".."+string(filepath.Separator) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}
