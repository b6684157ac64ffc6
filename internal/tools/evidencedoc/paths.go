// Package evidencedoc explains the evidence specs record, path by path: its
// type in JSON terms, what it means (from the Go doc comments, extracted
// at generate time into source.json, which the binary embeds), the
// capabilities the recording spec declares and those the claims
// that read it require, and example values from a run's report. It works on evidence.EvidenceDecl, so evidence declared
// elsewhere than in the suites (a claims file's probes) is explained the
// same way once its meanings are given.
//
// `kubeproof claims specs --evidence` prints it; docs/evidence.md is
// generated from it.
package evidencedoc

//go:generate go run ./gen source.json ../../../docs/evidence.md

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/claims/evidence"
)

// Node is one path of a piece of evidence: the evidence itself (the root),
// a struct field at any depth, or a list's element (0) or a map's value
// ({key}) that is not an object.
type Node struct {
	// Path is the evidence path as claims name it: the evidence name, then
	// JSON field names, 0 for a list's elements and {key} for a map's keys.
	Path string
	// Type is the Go type at the path (pointers followed).
	Type reflect.Type
	// DocKey names the Go field the path is, for its doc comment:
	// "<package path>.<struct type>.<field>", with the field names that
	// lead to an anonymous struct between type and field. A list element
	// or map value has its container's; the root has none.
	DocKey string
}

// maxDepth bounds the walk, as evidence.Paths does, so that a type that
// holds itself ends.
const maxDepth = 6

// Expand lists the paths a value of type t offers under name, in the
// order evidence.Paths lists them (fields by JSON name), each container
// before what it holds. Unlike evidence.Paths it lists the lists and maps
// themselves, their elements (index 0, {key}) and the paths below those,
// and the objects on the way, so that each can say what it is.
func Expand(name string, t reflect.Type) []Node {
	var out []Node
	var walk func(n Node, depth int, emit bool)
	walk = func(n Node, depth int, emit bool) {
		n.Type = deref(n.Type)
		if emit {
			out = append(out, n)
		}
		if depth >= maxDepth || leaf(n.Type) {
			return
		}
		switch t := n.Type; t.Kind() {
		case reflect.Struct:
			for _, f := range fields(t) {
				walk(Node{Path: n.Path + "." + f.name, Type: f.typ, DocKey: f.docKey(t, n)}, depth+1, true)
			}
		case reflect.Slice, reflect.Array, reflect.Map:
			seg := ".0"
			if t.Kind() == reflect.Map {
				seg = ".{key}"
			}
			e := deref(t.Elem())
			// The elements get a row of their own (a claim can name
			// x.0), but one that is an object only through its fields'
			// rows. Their meaning is the container's: the DocKey goes on
			// (an anonymous struct's fields are documented where the
			// container's field is).
			inner := e.Kind() != reflect.Struct
			walk(Node{Path: n.Path + seg, Type: e, DocKey: n.DocKey}, depth+1, inner)
		}
	}
	walk(Node{Path: name, Type: t}, 0, true)
	return out
}

type field struct {
	name string
	typ  reflect.Type
	// owner is the struct that declares the field (an embedded one for a
	// promoted field) and via the Go names of the fields that lead to it.
	owner  reflect.Type
	via    []string
	goName string
}

// docKey names f for its doc comment, as Node.DocKey says.
func (f field) docKey(parent reflect.Type, n Node) string {
	if f.owner.Name() != "" {
		return f.owner.PkgPath() + "." + f.owner.Name() + "." + f.goName
	}
	// An anonymous struct: its fields are written where the field holding
	// it is (n's key), or in the embedded anonymous struct on the way.
	base := n.DocKey
	if parent.Name() != "" {
		base = parent.PkgPath() + "." + parent.Name()
	}
	if base == "" {
		return ""
	}
	return strings.Join(append(append([]string{base}, f.via...), f.goName), ".")
}

// fields are the fields encoding/json writes for t, sorted by JSON name.
func fields(t reflect.Type) []field {
	var out []field
	for _, sf := range reflect.VisibleFields(t) {
		name, ok := evidence.JSONName(sf)
		if !ok {
			continue
		}
		owner, via := t, []string(nil)
		for _, i := range sf.Index[:len(sf.Index)-1] {
			e := owner.Field(i)
			owner = deref(e.Type)
			if owner.Name() == "" {
				via = append(via, e.Name)
			} else {
				via = nil
			}
		}
		out = append(out, field{name: name, typ: sf.Type, owner: owner, via: via, goName: sf.Name})
	}
	slices.SortStableFunc(out, func(a, b field) int { return strings.Compare(a.name, b.name) })
	return out
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

var rawType = reflect.TypeFor[json.RawMessage]()

// leaf reports whether t is encoded as one JSON value with nothing to
// name below it: a scalar, a time, raw JSON, bytes.
func leaf(t reflect.Type) bool {
	switch {
	case isTime(t), t == rawType:
		return true
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		return true
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Slice, reflect.Array, reflect.Map:
		return false
	}
	return true
}

func isTime(t reflect.Type) bool { return t.PkgPath() == "time" && t.Name() == "Time" }

// JSONType says what t is encoded as, in JSON's terms: string, number,
// bool, list of X, map of string to X, object, or any.
func JSONType(t reflect.Type) string {
	t = deref(t)
	switch {
	case isTime(t):
		return "string (time)"
	case t == rawType:
		return "any"
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		return "string (base64)"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "list of " + JSONType(t.Elem())
	case reflect.Map:
		// encoding/json writes every map key as a string.
		return "map of string to " + JSONType(t.Elem())
	case reflect.Struct:
		return "object"
	}
	return "any"
}
