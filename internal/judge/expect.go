package judge

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/claims/expect"
)

// holds reports whether the observed value v satisfies e.
func holds(e expect.Expectation, v any) bool { return e.Holds(v) }

// lookup follows a dot-separated path through decoded JSON evidence.
func lookup(observed map[string]any, path string) (any, bool) { return evidence.Lookup(observed, path) }

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
