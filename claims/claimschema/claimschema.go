// Package claimschema writes the JSON schema of a claims file from the Go
// types that read it (claims.File), so that the schema editors check files
// against cannot drift from what the loader accepts: a test fails when the
// schema shipped in schemas/ is not the one generated here.
//
// Descriptions come from the types' doc comments and enums from their typed
// constants, both read from the Go source (package sourcedoc, which the
// evidence catalog reads it with too), so that an editor explains a field
// in the words the code does.
package claimschema

//go:generate go run ./gen ../../schemas/claims-v1alpha1.json

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/internal/sourcedoc"
)

// ShippedPath is where the schema is in the repository, relative to its
// root; claims files name it in their first line.
const ShippedPath = "schemas/claims-v1alpha1.json"

const module = "github.com/kubeproof/kubeproof"

// schema is the part of JSON schema (draft-07, which editors' YAML language
// servers read) the generator emits.
type schema struct {
	Schema      string             `json:"$schema,omitempty"`
	Ref         string             `json:"$ref,omitempty"`
	Title       string             `json:"title,omitempty"`
	Description string             `json:"description,omitempty"`
	Type        string             `json:"type,omitempty"`
	Const       string             `json:"const,omitempty"`
	Enum        []string           `json:"enum,omitempty"`
	Properties  map[string]*schema `json:"properties,omitempty"`
	Required    []string           `json:"required,omitempty"`
	// Additional is false for objects: a field the Go type does not have
	// is refused, as the loader's strict decoding refuses it.
	Additional  *bool              `json:"additionalProperties,omitempty"`
	Items       *schema            `json:"items,omitempty"`
	AllOf       []*schema          `json:"allOf,omitempty"`
	OneOf       []*schema          `json:"oneOf,omitempty"`
	Definitions map[string]*schema `json:"definitions,omitempty"`
}

// Generate returns the schema of claims.File, indented, with a final
// newline. root is the repository's root, where the source of the types is
// read for their comments and constants.
func Generate(root string) ([]byte, error) {
	src := sourcedoc.New(root, module)
	if err := src.ReadTypes(reflect.TypeOf(claims.File{})); err != nil {
		return nil, fmt.Errorf("read the source of the claims types: %w", err)
	}
	g := &generator{src: src, defs: map[string]*schema{}}
	top := g.object(reflect.TypeOf(claims.File{}))
	top.Schema = "http://json-schema.org/draft-07/schema#"
	top.Title = "kubeproof claims file, " + claims.APIVersion
	top.Properties["apiVersion"].Const = claims.APIVersion
	top.Properties["kind"].Const = claims.FileKind
	top.Definitions = g.defs
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(top); err != nil {
		return nil, fmt.Errorf("encode the claims schema: %w", err)
	}
	return b.Bytes(), nil
}

type generator struct {
	src  *sourcedoc.Source
	defs map[string]*schema
}

// ref returns a reference to t's definition, made on first use.
func (g *generator) ref(t reflect.Type) *schema {
	if _, ok := g.defs[t.Name()]; !ok {
		g.defs[t.Name()] = nil // a type that refers to itself stops here
		g.defs[t.Name()] = g.object(t)
	}
	return &schema{Ref: "#/definitions/" + t.Name()}
}

// object is the schema of a struct: its fields by their JSON names, those
// without omitempty required.
func (g *generator) object(t reflect.Type) *schema {
	no := false
	s := &schema{Type: "object", Description: g.src.Types[sourcedoc.Key(t)].Text, Properties: map[string]*schema{}, Additional: &no}
	fields := reflect.VisibleFields(t)
	for _, f := range sourcedoc.OneOf(t) {
		f.Tag += ` schema:"oneof"`
		fields = append(fields, f)
	}
	for _, f := range fields {
		name, omit, ok := jsonName(f)
		if !ok || f.Tag.Get("schema") == "-" {
			continue
		}
		if f.Tag.Get("schema") == "oneof" {
			// Exactly one of these: a schema each that requires it.
			s.OneOf = append(s.OneOf, &schema{Required: []string{name}})
		}
		p := g.value(f.Type)
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
				p = &schema{Description: d, AllOf: []*schema{p}}
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

func (g *generator) value(t reflect.Type) *schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeOf(json.RawMessage{}) {
		return &schema{} // any JSON value
	}
	switch t.Kind() {
	case reflect.Struct:
		return g.ref(t)
	case reflect.Slice, reflect.Array:
		return &schema{Type: "array", Items: g.value(t.Elem())}
	case reflect.String:
		return &schema{Type: "string", Enum: g.src.Enums[sourcedoc.Key(t)]}
	case reflect.Bool:
		return &schema{Type: "boolean"}
	case reflect.Float32, reflect.Float64:
		return &schema{Type: "number"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &schema{Type: "integer"}
	}
	return &schema{}
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// jsonName is the name encoding/json uses for f, whether it is omitted when
// empty, and whether it is encoded at all.
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
	return name, slices.Contains(strings.Split(opts, ","), "omitempty"), true
}
