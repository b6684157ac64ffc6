package claims

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// EvidenceDecl says that a spec records a named piece of evidence of a Go
// type. Specs declare their evidence (framework.DeclareEvidence), so that a
// claim naming a path no spec records fails a unit test instead of showing
// up as a harness error after a cluster run.
type EvidenceDecl struct {
	Spec string
	Name string
	Type reflect.Type
	// Source is where the declaration is in the Go source (for a reader
	// going from a claim to the code that records its evidence).
	Source Source
}

// CheckEvidence reports every expectation and context path of the catalog's
// testable claims that no declared evidence of the claim's specs can hold,
// and every expectation whose value the declared type can never take (a
// number held against a string, a pattern against a number).
func CheckEvidence(cat *Catalog, decls []EvidenceDecl) []error {
	bySpec := map[string]map[string]reflect.Type{}
	for _, d := range decls {
		if bySpec[d.Spec] == nil {
			bySpec[d.Spec] = map[string]reflect.Type{}
		}
		bySpec[d.Spec][d.Name] = d.Type
	}
	var errs []error
	for _, c := range WithReadings(cat.Claims) {
		if !c.Checked() {
			continue
		}
		check := func(path, spec string, e *Expectation) {
			specs := c.Specs
			if spec != "" {
				specs = []string{spec}
			}
			var tried []string
			for _, s := range specs {
				name, _, _ := strings.Cut(path, ".")
				t, ok := bySpec[s][name]
				if !ok {
					continue
				}
				leaf, err := Resolve(t, path)
				if err != nil {
					tried = append(tried, fmt.Sprintf("%s: %v", s, err))
					continue
				}
				if e != nil {
					if err := e.fits(leaf); err != nil {
						tried = append(tried, fmt.Sprintf("%s: %v", s, err))
						continue
					}
				}
				return
			}
			near := nearest(path, specPaths(bySpec, specs), 3)
			if len(tried) == 0 {
				errs = append(errs, fmt.Errorf("claim %s: evidence %s is recorded by none of its specs %v%s", c.ID, path, specs, near))
				return
			}
			errs = append(errs, fmt.Errorf("claim %s: evidence %s: %s%s", c.ID, path, strings.Join(tried, "; "), near))
		}
		for i := range c.Expect {
			check(c.Expect[i].Evidence, c.Expect[i].Spec, &c.Expect[i])
		}
		for _, alt := range c.Conditional {
			for i := range alt.Expect {
				check(alt.Expect[i].Evidence, alt.Expect[i].Spec, &alt.Expect[i])
			}
		}
		for _, p := range c.Context {
			check(p, "", nil)
		}
	}
	return errs
}

// specPaths are the evidence paths the specs record (Paths of each
// declaration).
func specPaths(bySpec map[string]map[string]reflect.Type, specs []string) []string {
	var out []string
	for _, s := range specs {
		for name, t := range bySpec[s] {
			out = append(out, Paths(name, t)...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// nearest names up to n of paths closest to path (by edit distance, then
// by the longer shared prefix), as "; nearest: a, b, c", for a reader who
// mistyped a path: the right one is usually a letter or a segment away.
// The closest is always named.
func nearest(path string, paths []string, n int) string {
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

// Resolve follows a dot-separated evidence path (its first part is the
// evidence name) through t and returns the type found at its end: struct
// fields by their JSON names, map keys of any value, list indexes.
func Resolve(t reflect.Type, path string) (reflect.Type, error) {
	parts := strings.Split(path, ".")
	for i, p := range parts[1:] {
		t = deref(t)
		switch t.Kind() {
		case reflect.Struct:
			f, ok := jsonField(t, p)
			if !ok {
				return nil, fmt.Errorf("%s has no field %q (it has %s)", strings.Join(parts[:i+1], "."), p, strings.Join(jsonNames(t), ", "))
			}
			t = f
		case reflect.Map:
			t = t.Elem()
		case reflect.Slice, reflect.Array:
			if _, err := strconv.Atoi(p); err != nil {
				return nil, fmt.Errorf("%s is a list: %q is not an index", strings.Join(parts[:i+1], "."), p)
			}
			t = t.Elem()
		case reflect.Interface:
			return nil, fmt.Errorf("%s is untyped (%s): the path below it cannot be checked", strings.Join(parts[:i+1], "."), t)
		default:
			return nil, fmt.Errorf("%s is a %s: it has no %q", strings.Join(parts[:i+1], "."), t.Kind(), p)
		}
	}
	return deref(t), nil
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// jsonField finds the field that encoding/json writes under name: one of
// t's, or of those its OneOf lists (an observer's kinds).
func jsonField(t reflect.Type, name string) (reflect.Type, bool) {
	fields := reflect.VisibleFields(t)
	if o, ok := reflect.Zero(t).Interface().(interface{ OneOf() []reflect.StructField }); ok {
		fields = append(fields, o.OneOf()...)
	}
	for _, f := range fields {
		if n, ok := JSONName(f); ok && n == name && len(f.Index) > 0 {
			return f.Type, true
		}
	}
	return nil, false
}

func jsonNames(t reflect.Type) []string {
	var out []string
	for _, f := range reflect.VisibleFields(t) {
		if n, ok := JSONName(f); ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// JSONName is the name a field is encoded under, if it is encoded (an
// embedded struct's own name is not a path: its fields are).
func JSONName(f reflect.StructField) (string, bool) {
	if !f.IsExported() || f.Anonymous {
		return "", false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, true
}

// fits reports whether a value of type t can ever satisfy e.
func (e Expectation) fits(t reflect.Type) error {
	if t.Kind() == reflect.Interface {
		return nil
	}
	want := func(ok bool, what string) error {
		if ok {
			return nil
		}
		return fmt.Errorf("%s wants %s, but the spec records a %s", e.Want(), what, t)
	}
	switch {
	case e.Matches != "":
		return want(t.Kind() == reflect.String, "a string")
	case e.ranged():
		return want(numeric(t), "a number")
	case e.AnyMatches != nil:
		if err := want(t.Kind() == reflect.Slice || t.Kind() == reflect.Array, "a list"); err != nil {
			return err
		}
		return e.elementFits(deref(t.Elem()))
	case e.Contains != nil:
		return want(t.Kind() == reflect.String || t.Kind() == reflect.Slice || t.Kind() == reflect.Array, "a string or a list")
	}
	var raws []json.RawMessage
	switch {
	case e.Equals != nil:
		raws = []json.RawMessage{*e.Equals}
	case e.NotEquals != nil:
		raws = []json.RawMessage{*e.NotEquals}
	default:
		raws = e.OneOf
	}
	for _, r := range raws {
		var v any
		if err := json.Unmarshal(r, &v); err != nil {
			return err
		}
		if err := want(kindFits(v, t), jsonKind(v)); err != nil {
			return err
		}
	}
	return nil
}

// elementFits reports whether an anyMatches pattern can match elements of
// type t: a regular expression needs strings, fields need objects that have
// them.
func (e Expectation) elementFits(t reflect.Type) error {
	p, err := e.ElementPattern()
	if err != nil || t.Kind() == reflect.Interface {
		return err
	}
	if p.Whole != nil {
		if t.Kind() != reflect.String {
			return fmt.Errorf("%s wants a list of strings, but the spec records a list of %s", e.Want(), t)
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Map:
		return nil
	case reflect.Struct:
		for field := range p.Fields {
			if _, ok := jsonField(t, field); !ok {
				return fmt.Errorf("%s: the list's elements have no field %q (they have %s)", e.Want(), field, strings.Join(jsonNames(t), ", "))
			}
		}
		return nil
	}
	return fmt.Errorf("%s wants a list of objects, but the spec records a list of %s", e.Want(), t)
}

func numeric(t reflect.Type) bool {
	return slices.Contains([]reflect.Kind{reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64}, t.Kind())
}

// kindFits reports whether a JSON value v can be the encoding of a t.
func kindFits(v any, t reflect.Type) bool {
	switch v.(type) {
	case nil:
		return slices.Contains([]reflect.Kind{reflect.Slice, reflect.Map, reflect.Interface}, t.Kind())
	case bool:
		return t.Kind() == reflect.Bool
	case float64:
		return numeric(t)
	case string:
		return t.Kind() == reflect.String
	case []any:
		return t.Kind() == reflect.Slice || t.Kind() == reflect.Array
	default:
		return t.Kind() == reflect.Struct || t.Kind() == reflect.Map
	}
}

func jsonKind(v any) string {
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

// Paths lists the evidence paths a value of type t offers under name, for
// people writing claims: struct fields by JSON name, {key} for map keys and
// 0 for list elements.
func Paths(name string, t reflect.Type) []string {
	var out []string
	var walk func(prefix string, t reflect.Type, depth int)
	walk = func(prefix string, t reflect.Type, depth int) {
		t = deref(t)
		if depth > 6 {
			out = append(out, prefix)
			return
		}
		switch t.Kind() {
		case reflect.Struct:
			if t.PkgPath() == "time" {
				out = append(out, prefix)
				return
			}
			for _, n := range jsonNames(t) {
				f, _ := jsonField(t, n)
				walk(prefix+"."+n, f, depth+1)
			}
		case reflect.Map:
			walk(prefix+".{key}", t.Elem(), depth+1)
		default:
			out = append(out, prefix)
		}
	}
	walk(name, t, 0)
	return out
}
