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
	// A value is shown whole, a message above all: its end is often its
	// cause. Only a value too long to read in a line (a watch's every
	// version) is cut, and claims.json keeps it whole.
	if _, isString := v.(string); !isString && len(s) > maxShown {
		s = s[:maxShown] + fmt.Sprintf("... (%d characters more: claims.json has it whole)", len(s)-maxShown)
	}
	return s
}

// maxShown is how much of a value other than a string a reason shows.
const maxShown = 2000

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
