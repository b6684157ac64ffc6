package evidence

import (
	"slices"
	"strings"
)

// Nearest names up to n of paths closest to path (by edit distance, then
// by the longer shared prefix), as "; nearest: a, b, c", for a reader who
// mistyped a path: the right one is usually a letter or a segment away.
// The closest is always named.
func Nearest(path string, paths []string, n int) string {
	if len(paths) == 0 {
		return ""
	}
	type cand struct {
		path         string
		dist, prefix int
	}
	cands := make([]cand, len(paths))
	for i, p := range paths {
		cands[i] = cand{p, editDistance(path, p), sharedPrefix(path, p)}
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return b.prefix - a.prefix
	})
	// Past half the path's length a candidate is another path, not the
	// one meant; the closest is named all the same.
	var names []string
	for i, c := range cands[:min(n, len(cands))] {
		if i > 0 && c.dist > len(path)/2 {
			break
		}
		names = append(names, c.path)
	}
	return "; nearest: " + strings.Join(names, ", ")
}

// editDistance is the Levenshtein distance of a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur := make([]int, len(rb)+1)
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(rb)]
}

// sharedPrefix is how many leading bytes a and b share.
func sharedPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
