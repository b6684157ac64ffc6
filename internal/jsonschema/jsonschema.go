// Package jsonschema writes the JSON Schema of a Go type from the type
// itself, as encoding/json encodes it, so that a shipped schema cannot
// drift from what the code reads or writes: a test fails when the file in
// schemas/ is not the one generated here. It serves the claims file's
// schema (claims/claimschema) and those of kubeproof's JSON
// outputs (internal/tools/jsonout), and checks documents against a shipped
// schema in tests (Validate).
//
// Descriptions come from the types' doc comments and enums from their typed
// string constants, both read from the Go source of the module (package
// sourcedoc, the one reader of doc comments), so that an editor or a reader
// of the schema sees a field explained in the words the code uses.
package jsonschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/kubeproof/kubeproof/internal/sourcedoc"
)

// Module is the Go module whose source is read for comments and enums.
const Module = "github.com/kubeproof/kubeproof"

// Schema is the part of JSON Schema (draft-07, which editors' language
// servers read) the generator emits.
type Schema struct {
	Schema      string             `json:"$schema,omitempty"`
	ID          string             `json:"$id,omitempty"`
	Ref         string             `json:"$ref,omitempty"`
	Title       string             `json:"title,omitempty"`
	Description string             `json:"description,omitempty"`
	Type        any                `json:"type,omitempty"`
	Format      string             `json:"format,omitempty"`
	Const       string             `json:"const,omitempty"`
	Enum        []string           `json:"enum,omitempty"`
	Properties  map[string]*Schema `json:"properties,omitempty"`
	Required    []string           `json:"required,omitempty"`
	// Additional is false for objects (a field the Go type does not have is
	// refused, as strict decoding refuses it), or the schema of a map's
	// values.
	Additional  any                `json:"additionalProperties,omitempty"`
	Items       *Schema            `json:"items,omitempty"`
	AllOf       []*Schema          `json:"allOf,omitempty"`
	AnyOf       []*Schema          `json:"anyOf,omitempty"`
	OneOf       []*Schema          `json:"oneOf,omitempty"`
	Definitions map[string]*Schema `json:"definitions,omitempty"`
}

// Options say what a schema is for.
type Options struct {
	// Title heads the schema.
	Title string
	// Consts are fields of the top type that hold one value (its
	// apiVersion, kind or schemaVersion), by JSON name.
	Consts map[string]string
	// Input: the schema of a file people write, read with strict decoding:
	// fields tagged schema:"-" (set by the loader) are left out. Otherwise
	// the schema of a document kubeproof writes: every field is in it, and
	// a slice, map or pointer encoding/json may write as null may be null.
	Input bool
}

// Generate returns the schema of the type of v, indented, with a final
// newline. root is the module's root, where the source of the types is
// read for their comments and constants.
func Generate(root string, v any, o Options) ([]byte, error) {
	t := reflect.TypeOf(v)
	src := sourcedoc.New(root, Module)
	if err := src.ReadTypes(t); err != nil {
		return nil, fmt.Errorf("read the source of %s: %w", t, err)
	}
	g := &generator{src: src, defs: map[string]*Schema{}, names: map[reflect.Type]string{}, opts: o}
	top := g.object(t)
	top.Schema = "http://json-schema.org/draft-07/schema#"
	top.Title = o.Title
	for name, value := range o.Consts {
		p, ok := top.Properties[name]
		if !ok {
			return nil, fmt.Errorf("schema of %s: no field %q to hold %q", t, name, value)
		}
		p.Const = value
	}
	if len(g.defs) > 0 {
		top.Definitions = g.defs
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(top); err != nil {
		return nil, fmt.Errorf("encode the schema of %s: %w", t, err)
	}
	return b.Bytes(), nil
}

type generator struct {
	src   *sourcedoc.Source
	defs  map[string]*Schema
	names map[reflect.Type]string
	opts  Options
}

// ref returns a reference to t's definition, made on first use. A
// definition is named by its type's name, qualified by its package where
// two types share a name.
func (g *generator) ref(t reflect.Type) *Schema {
	name, ok := g.names[t]
	if !ok {
		name = t.Name()
		if _, taken := g.defs[name]; taken {
			name = strings.ReplaceAll(t.String(), ".", "_")
		}
		g.names[t] = name
		g.defs[name] = nil // a type that refers to itself stops here
		g.defs[name] = g.object(t)
	}
	return &Schema{Ref: "#/definitions/" + name}
}

// object is the schema of a struct: its fields by their JSON names, those
// encoded even when empty required.
func (g *generator) object(t reflect.Type) *Schema {
	s := &Schema{Type: "object", Description: g.src.Types[sourcedoc.Key(t)].Text, Properties: map[string]*Schema{}, Additional: false}
	fields := reflect.VisibleFields(t)
	for _, f := range sourcedoc.OneOf(t) {
		f.Tag += ` schema:"oneof"`
		fields = append(fields, f)
	}
	for _, f := range fields {
		name, omit, ok := jsonName(f)
		if !ok || (g.opts.Input && f.Tag.Get("schema") == "-") {
			continue
		}
		if f.Tag.Get("schema") == "oneof" {
			// Exactly one of these: a schema each that requires it.
			s.OneOf = append(s.OneOf, &Schema{Required: []string{name}})
		}
		p := g.value(f.Type, !omit)
		d := g.src.Fields[sourcedoc.Key(t, f.Name)].Text
		if d == "" {
			// A field a method lists (an observer's kind) is documented
			// by its type.
			d = g.src.Types[sourcedoc.Key(deref(f.Type))].Text
		}
		if d != "" {
			if p.Ref != "" {
				// draft-07 ignores the siblings of a $ref: the description
				// goes beside it, the reference into an allOf.
				p = &Schema{Description: d, AllOf: []*Schema{p}}
			} else {
				p.Description = d
			}
		}
		s.Properties[name] = p
		if !omit {
			s.Required = append(s.Required, name)
		}
	}
	slices.Sort(s.Required)
	return s
}

var (
	timeType = reflect.TypeOf(time.Time{})
	rawType  = reflect.TypeOf(json.RawMessage{})
)

// value is the schema of a value of type t; always: encoding/json writes it
// even when empty (no omitempty), so a nil slice, map or pointer of an
// output is null.
func (g *generator) value(t reflect.Type, always bool) *Schema {
	nullable := func(s *Schema, typ string) *Schema {
		if always && !g.opts.Input {
			s.Type = []string{typ, "null"}
		} else {
			s.Type = typ
		}
		return s
	}
	if t.Kind() == reflect.Pointer {
		inner := g.value(t.Elem(), false)
		if always && !g.opts.Input {
			return &Schema{AnyOf: []*Schema{inner, {Type: "null"}}}
		}
		return inner
	}
	switch {
	case t == rawType || t.Kind() == reflect.Interface:
		return &Schema{} // any JSON value
	case t == timeType:
		return &Schema{Type: "string", Format: "date-time"}
	}
	switch t.Kind() {
	case reflect.Struct:
		return g.ref(t)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			// encoding/json writes []byte as base64, and a nil one as null.
			return nullable(&Schema{}, "string")
		}
		return nullable(&Schema{Items: g.value(t.Elem(), false)}, "array")
	case reflect.Map:
		return nullable(&Schema{Additional: g.value(t.Elem(), false)}, "object")
	case reflect.String:
		return &Schema{Type: "string", Enum: g.src.Enums[sourcedoc.Key(t)]}
	case reflect.Bool:
		return &Schema{Type: "boolean"}
	case reflect.Float32, reflect.Float64:
		return &Schema{Type: "number"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &Schema{Type: "integer"}
	}
	return &Schema{}
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// jsonName is the name encoding/json uses for f, whether it is omitted when
// empty (omitempty, omitzero), and whether it is encoded at all.
func jsonName(f reflect.StructField) (name string, omitempty, ok bool) {
	if !f.IsExported() || f.Anonymous {
		return "", false, false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false, false
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	o := strings.Split(opts, ",")
	return name, slices.Contains(o, "omitempty") || slices.Contains(o, "omitzero"), true
}
