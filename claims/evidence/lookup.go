package evidence

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Lookup follows a dot-separated evidence path through evidence decoded
// from JSON: its first part names the evidence, then fields, list indexes,
// {key} for the first key of a map in order (as the evidence catalog names
// a map's values), or # for the length of a list, an object or a string.
func Lookup(evidence map[string]any, path string) (any, bool) {
	v, found, _ := Find(evidence, path)
	return v, found
}

// Find is Lookup that says, when the path has no value, whether it is
// absent from what was recorded: a list element past the list's end, or a
// path through a null ("pod.values.phase has 2 elements: none at 3"). An
// evidence name or a field that was not recorded has no why: a spec that
// did not get to it, or did not record it, explains that.
func Find(evidence map[string]any, path string) (v any, found bool, why string) {
	parts := strings.Split(path, ".")
	v, ok := evidence[parts[0]]
	if !ok {
		return nil, false, ""
	}
	for i, p := range parts[1:] {
		at := strings.Join(parts[:i+1], ".")
		if p == "#" {
			switch x := v.(type) {
			case []any:
				v = float64(len(x))
			case map[string]any:
				v = float64(len(x))
			case string:
				v = float64(len([]rune(x)))
			case nil:
				v = float64(0)
			default:
				return nil, false, fmt.Sprintf("%s is %s: it has no length", at, KindOf(v))
			}
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			if p == "{key}" {
				keys := slices.Sorted(maps.Keys(x))
				if len(keys) == 0 {
					return nil, false, at + " is empty: it has no first key"
				}
				p = keys[0]
			}
			if v, ok = x[p]; !ok {
				return nil, false, ""
			}
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false, fmt.Sprintf("%s has %s: none at %s", at, elements(len(x)), p)
			}
			v = x[i]
		case nil:
			return nil, false, at + " is null"
		default:
			return nil, false, fmt.Sprintf("%s is %s: it has no %s", at, KindOf(v), p)
		}
	}
	return v, true, ""
}

func elements(n int) string {
	if n == 1 {
		return "1 element"
	}
	return fmt.Sprintf("%d elements", n)
}

// KindOf names the kind of a value decoded from JSON, as a reason says it
// ("a number", "a list", "null").
func KindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	default:
		return "an object"
	}
}
