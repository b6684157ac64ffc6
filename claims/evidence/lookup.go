package evidence

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Lookup follows a dot-separated evidence path through evidence decoded
// from JSON: its first part names the evidence, then fields, list indexes,
// or {key} for the first key of a map in order (as the evidence catalog
// names a map's values).
func Lookup(evidence map[string]any, path string) (any, bool) {
	parts := strings.Split(path, ".")
	v, ok := evidence[parts[0]]
	if !ok {
		return nil, false
	}
	for _, p := range parts[1:] {
		switch x := v.(type) {
		case map[string]any:
			if p == "{key}" {
				keys := slices.Sorted(maps.Keys(x))
				if len(keys) == 0 {
					return nil, false
				}
				p = keys[0]
			}
			if v, ok = x[p]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}
