package judge

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/kubeproof/kubeproof/framework/claims"
)

// holds reports whether the observed value v satisfies e.
func holds(e claims.Expectation, v any) bool { return e.Holds(v) }

// lookup follows a dot-separated path through decoded JSON evidence.
func lookup(evidence map[string]any, path string) (any, bool) {
	parts := strings.Split(path, ".")
	v, ok := evidence[parts[0]]
	if !ok {
		return nil, false
	}
	for _, p := range parts[1:] {
		switch x := v.(type) {
		case map[string]any:
			v, ok = x[p]
			if !ok {
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

// show renders an observed value compactly for reports.
func show(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(data)
	if len(s) > 300 {
		s = s[:297] + "..."
	}
	return s
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
