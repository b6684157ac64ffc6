// Package evidence types what specs record: a declaration of a piece of
// evidence (EvidenceDecl: its spec, name and Go type, and where it is
// declared, a Source), the paths claims name through it (Resolve, Paths,
// Nearest for a mistyped one) and the value at a path of recorded
// evidence (Lookup).
package evidence

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/kubeproof/kubeproof/internal/sourcedoc"
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

// Resolve follows a dot-separated evidence path (its first part is the
// evidence name) through t and returns the type found at its end: struct
// fields by their JSON names, map keys of any value, list indexes, # for
// the length of a list, an object or a string.
func Resolve(t reflect.Type, path string) (reflect.Type, error) {
	parts := strings.Split(path, ".")
	for i, p := range parts[1:] {
		t = Deref(t)
		if p == "#" {
			switch t.Kind() {
			case reflect.Slice, reflect.Array, reflect.Map, reflect.String, reflect.Interface:
				t = reflect.TypeFor[int]()
				continue
			}
			return nil, fmt.Errorf("%s is a %s: # is the length of a list, an object or a string", strings.Join(parts[:i+1], "."), t.Kind())
		}
		switch t.Kind() {
		case reflect.Struct:
			f, ok := FieldType(t, p)
			if !ok {
				return nil, fmt.Errorf("%s has no field %q (it has %s)", strings.Join(parts[:i+1], "."), p, strings.Join(FieldNames(t), ", "))
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
	return Deref(t), nil
}

// Deref is t without its pointers.
func Deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// FieldType finds the type of the field that encoding/json writes under name: one of
// t's, or of those its OneOf lists (an observer's kinds).
func FieldType(t reflect.Type, name string) (reflect.Type, bool) {
	for _, f := range append(reflect.VisibleFields(t), sourcedoc.OneOf(t)...) {
		if n, ok := JSONName(f); ok && n == name && len(f.Index) > 0 {
			return f.Type, true
		}
	}
	return nil, false
}

// FieldNames are the JSON names of t's fields, sorted.
func FieldNames(t reflect.Type) []string {
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

// Paths lists the evidence paths a value of type t offers under name, for
// people writing claims: struct fields by JSON name, {key} for map keys and
// 0 for list elements.
func Paths(name string, t reflect.Type) []string {
	var out []string
	var walk func(prefix string, t reflect.Type, depth int)
	walk = func(prefix string, t reflect.Type, depth int) {
		t = Deref(t)
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
			for _, n := range FieldNames(t) {
				f, _ := FieldType(t, n)
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

// Source is a place in a claims file, or in the Go source of a spec or an
// evidence declaration.
type Source struct {
	// File is the file's path as a reader finds it: relative to the
	// repository for the built-in catalog (fixtures/claims/...) and the Go
	// source (suites/...), as given (relative to the working directory
	// where it is inside it) for a user's claims file.
	File string `json:"file"`
	// Line is the 1-based line (in a claims file, of the claim's id).
	Line int `json:"line"`
}
