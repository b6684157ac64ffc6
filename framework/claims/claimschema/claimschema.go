// Package claimschema writes the JSON schema of a claims file from the Go
// types that read it (claims.File), so that the schema editors check files
// against cannot drift from what the loader accepts: a test fails when the
// schema shipped in schemas/ is not the one generated here.
//
// Descriptions come from the types' doc comments and enums from their typed
// constants, both read from the Go source, so that an editor explains a
// field in the words the code does.
package claimschema

//go:generate go run ./gen ../../../schemas/claims-v1alpha1.json

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/kubeproof/kubeproof/framework/claims"
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
	src, err := readSource(root, reflect.TypeOf(claims.File{}))
	if err != nil {
		return nil, err
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
	src  *source
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
	s := &schema{Type: "object", Description: g.src.docs[key(t, "")], Properties: map[string]*schema{}, Additional: &no}
	fields := reflect.VisibleFields(t)
	for _, f := range oneOf(t) {
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
		d := g.src.docs[key(t, f.Name)]
		if d == "" {
			// A field a method lists (an observer's kind) is documented
			// by its type.
			d = g.src.docs[key(deref(f.Type), "")]
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
		return &schema{Type: "string", Enum: g.src.enums[key(t, "")]}
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

// oneOf are the fields t's OneOf method lists: keys of which an object of
// t takes exactly one, decoded by t itself (an observer's kinds).
func oneOf(t reflect.Type) []reflect.StructField {
	if o, ok := reflect.Zero(t).Interface().(interface{ OneOf() []reflect.StructField }); ok {
		return o.OneOf()
	}
	return nil
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

// key names a type ("claims.Claim") or one of its fields
// ("claims.Claim.Quote") in source.
func key(t reflect.Type, field string) string {
	k := t.String()
	if field != "" {
		k += "." + field
	}
	return k
}

// source is what the Go source says about the types: doc comments by key,
// and for each named string type the values of its typed constants.
type source struct {
	docs  map[string]string
	enums map[string][]string
}

// readSource reads the packages of t and of the types it holds.
func readSource(root string, t reflect.Type) (*source, error) {
	src := &source{docs: map[string]string{}, enums: map[string][]string{}}
	seen := map[reflect.Type]bool{}
	pkgs := map[string]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if seen[t] {
			return
		}
		seen[t] = true
		if strings.HasPrefix(t.PkgPath(), module+"/") {
			pkgs[t.PkgPath()] = true
		}
		if t.Kind() == reflect.Struct {
			for _, f := range append(reflect.VisibleFields(t), oneOf(t)...) {
				walk(f.Type)
			}
		}
	}
	walk(t)
	for p := range pkgs {
		if err := src.read(filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(p, module+"/")))); err != nil {
			return nil, err
		}
	}
	for k := range src.enums {
		slices.Sort(src.enums[k])
	}
	return src, nil
}

// read adds the doc comments and typed string constants of the package in
// dir (its test files aside).
func (s *source) read(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read the source of the claims types: %w", err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			return fmt.Errorf("read the source of the claims types: %w", err)
		}
		s.file(f)
	}
	return nil
}

func (s *source) file(f *ast.File) {
	pkg := f.Name.Name
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range gd.Specs {
			switch sp := spec.(type) {
			case *ast.TypeSpec:
				doc := sp.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				s.docs[pkg+"."+sp.Name.Name] = text(doc)
				st, ok := sp.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, fld := range st.Fields.List {
					for _, n := range fld.Names {
						s.docs[pkg+"."+sp.Name.Name+"."+n.Name] = text(fld.Doc)
					}
				}
			case *ast.ValueSpec:
				typ, ok := sp.Type.(*ast.Ident)
				if gd.Tok != token.CONST || !ok {
					continue
				}
				for _, v := range sp.Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if val, err := strconv.Unquote(lit.Value); err == nil {
							s.enums[pkg+"."+typ.Name] = append(s.enums[pkg+"."+typ.Name], val)
						}
					}
				}
			}
		}
	}
}

// text is a doc comment as one paragraph: editors show it in a tooltip.
func text(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	return strings.Join(strings.Fields(g.Text()), " ")
}
