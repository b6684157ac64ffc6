package judge

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kubeproof/kubeproof/framework/claims"
)

// holds reports whether the observed value v satisfies e.
func holds(e claims.Expectation, v any) bool {
	switch {
	case e.Equals != nil:
		return rawEqual(*e.Equals, v)
	case e.NotEquals != nil:
		return !rawEqual(*e.NotEquals, v)
	case e.OneOf != nil:
		for _, r := range e.OneOf {
			if rawEqual(r, v) {
				return true
			}
		}
		return false
	case e.Matches != "":
		s, ok := v.(string)
		return ok && regexp.MustCompile(e.Matches).MatchString(s)
	case e.Contains != nil:
		var want any
		if json.Unmarshal(*e.Contains, &want) != nil {
			return false
		}
		switch x := v.(type) {
		case string:
			ws, ok := want.(string)
			return ok && strings.Contains(x, ws)
		case []any:
			for _, el := range x {
				if jsonEqual(want, el) {
					return true
				}
			}
		}
		return false
	case e.AnyMatches != nil:
		p, err := e.ElementPattern()
		list, ok := v.([]any)
		return err == nil && ok && slices.ContainsFunc(list, p.Match)
	case e.AtLeast != nil || e.AtMost != nil:
		f, ok := v.(float64)
		if !ok {
			return false
		}
		return (e.AtLeast == nil || f >= *e.AtLeast) && (e.AtMost == nil || f <= *e.AtMost)
	}
	return false
}

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

// jsonEqual compares two values decoded from JSON.
func jsonEqual(a, b any) bool { return reflect.DeepEqual(a, b) }

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

// rawEqual compares a JSON value with a decoded Go value.
func rawEqual(raw json.RawMessage, v any) bool {
	var want any
	if err := json.Unmarshal(raw, &want); err != nil {
		return false
	}
	return jsonEqual(want, v)
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
