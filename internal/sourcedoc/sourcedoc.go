// Package sourcedoc reads what a module's Go source says of its
// declarations: the doc comments of types, of their fields (at any depth of
// anonymous structs) and of package-level vars (with the lines they span),
// and the values of typed string constants. Both generators that turn Go
// into documents read it: the claims file's JSON schema (descriptions and
// enums, claims/claimschema) and the evidence catalog (what each
// evidence path means, internal/tools/evidencedoc/gosource).
package sourcedoc

import (
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
	"unicode"
)

// Doc is a doc comment, as one line, and what it documents.
type Doc struct {
	Text string
	// What names the declaration: "type claims.Claim", "field
	// claims.Claim.Quote", "declaration apiserver.correction" (the
	// package's name, not its path: a reader's words).
	What string
}

// Var is the doc comment of a package-level var spec and the lines it
// spans (a call in them, such as a DeclareEvidence, is documented by it).
type Var struct {
	Doc
	From, To int
}

// Source is what the packages read so far say. Keys are import paths:
// "<path>.<Type>" for a type and its enum, "<path>.<Type>.<Field>[.<Field>]"
// for a field (through the fields that hold an anonymous struct).
type Source struct {
	root, module string
	Types        map[string]Doc
	Fields       map[string]Doc
	// Vars are by file, slash-separated from the module's root.
	Vars map[string][]Var
	// Enums are the values of a named string type's typed constants,
	// sorted.
	Enums map[string][]string
	read  map[string]bool
}

// New reads nothing yet: root is the module's directory, module its path.
func New(root, module string) *Source {
	return &Source{root: root, module: module, Types: map[string]Doc{}, Fields: map[string]Doc{},
		Vars: map[string][]Var{}, Enums: map[string][]string{}, read: map[string]bool{}}
}

// Key is the key of type t, or of its field (and the fields below it) in
// Types, Fields and Enums.
func Key(t reflect.Type, fields ...string) string {
	return strings.Join(append([]string{t.PkgPath() + "." + t.Name()}, fields...), ".")
}

// ReadTypes reads the packages of the module that t and the types it holds
// are declared in: its fields', its elements', and those a OneOf method
// lists (the keys a type decodes itself, an observer's kinds).
func (s *Source) ReadTypes(t reflect.Type) error {
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type) error
	walk = func(t reflect.Type) error {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if seen[t] {
			return nil
		}
		seen[t] = true
		if err := s.ReadPackage(t.PkgPath()); err != nil {
			return err
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
		for _, f := range append(reflect.VisibleFields(t), OneOf(t)...) {
			if err := walk(f.Type); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(t)
}

// OneOf are the fields t's OneOf method lists: keys of which a value of t
// takes exactly one, decoded by t itself.
func OneOf(t reflect.Type) []reflect.StructField {
	if o, ok := reflect.Zero(t).Interface().(interface{ OneOf() []reflect.StructField }); ok {
		return o.OneOf()
	}
	return nil
}

// ReadPackage reads the package with import path p when it is the
// module's (others have no source here, and are left out).
func (s *Source) ReadPackage(p string) error {
	rel, ok := strings.CutPrefix(p, s.module+"/")
	if !ok {
		return nil
	}
	return s.ReadDir(rel)
}

// ReadDir reads the package in dir (slash-separated, from the module's
// root), its tests aside, once.
func (s *Source) ReadDir(dir string) error {
	dir = filepath.ToSlash(dir)
	if s.read[dir] {
		return nil
	}
	s.read[dir] = true
	entries, err := os.ReadDir(filepath.Join(s.root, filepath.FromSlash(dir)))
	if err != nil {
		return fmt.Errorf("read the Go source of %s: %w", dir, err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(s.root, filepath.FromSlash(dir), e.Name()), nil, parser.ParseComments)
		if err != nil {
			return fmt.Errorf("read the Go source of %s: %w", dir, err)
		}
		s.file(fset, s.module+"/"+dir, dir+"/"+e.Name(), f)
	}
	for k := range s.Enums {
		slices.Sort(s.Enums[k])
		s.Enums[k] = slices.Compact(s.Enums[k])
	}
	return nil
}

func (s *Source) file(fset *token.FileSet, pkgPath, file string, f *ast.File) {
	pkg := f.Name.Name
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range gd.Specs {
			switch sp := spec.(type) {
			case *ast.TypeSpec:
				c := sp.Doc
				if c == nil && len(gd.Specs) == 1 {
					c = gd.Doc
				}
				key := pkgPath + "." + sp.Name.Name
				s.Types[key] = Doc{text(c), "type " + pkg + "." + sp.Name.Name}
				s.structFields(fset, key, pkg+"."+sp.Name.Name, sp.Type)
			case *ast.ValueSpec:
				switch {
				case gd.Tok == token.VAR && len(sp.Names) > 0:
					c := sp.Doc
					if c == nil {
						c = sp.Comment
					}
					if c == nil && len(gd.Specs) == 1 {
						c = gd.Doc
					}
					s.Vars[file] = append(s.Vars[file], Var{
						Doc:  Doc{text(c), "declaration " + pkg + "." + sp.Names[0].Name},
						From: fset.Position(sp.Pos()).Line, To: fset.Position(sp.End()).Line,
					})
				case gd.Tok == token.CONST:
					s.enum(pkgPath, sp)
				}
			}
		}
	}
}

// enum records the string values of constants of a named type.
func (s *Source) enum(pkgPath string, sp *ast.ValueSpec) {
	typ, ok := sp.Type.(*ast.Ident)
	if !ok {
		return
	}
	for _, v := range sp.Values {
		if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if val, err := strconv.Unquote(lit.Value); err == nil {
				s.Enums[pkgPath+"."+typ.Name] = append(s.Enums[pkgPath+"."+typ.Name], val)
			}
		}
	}
}

// structFields records the doc comments of the fields of the struct that
// t is (or holds, for an anonymous one in a list, map or pointer), under
// key and for readers under name.
func (s *Source) structFields(fset *token.FileSet, key, name string, t ast.Expr) {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.ArrayType:
			t = x.Elt
			continue
		case *ast.MapType:
			t = x.Value
			continue
		}
		break
	}
	st, ok := t.(*ast.StructType)
	if !ok {
		return
	}
	// block are the comments of the block of fields (lines without a
	// blank between) the field is in: "Attempts are the refused creates;
	// IntervalsMs the time between them" documents both fields.
	var block []*ast.CommentGroup
	for i, fld := range st.Fields.List {
		c := fld.Doc
		if c == nil {
			c = fld.Comment
		}
		start := fld.Pos()
		if fld.Doc != nil {
			start = fld.Doc.Pos()
		}
		if i > 0 && fset.Position(start).Line > fset.Position(st.Fields.List[i-1].End()).Line+1 {
			block = nil
		}
		if c != nil {
			block = append(block, c)
		}
		// An embedded field has no name: its fields are promoted, and
		// documented under its own type.
		for _, n := range fld.Names {
			d := Doc{text(c), "field " + name + "." + n.Name}
			if c == nil {
				if i := slices.IndexFunc(block, func(c *ast.CommentGroup) bool { return mentions(c, n.Name) }); i >= 0 {
					d.Text = text(block[i])
				}
			}
			s.Fields[key+"."+n.Name] = d
			s.structFields(fset, key+"."+n.Name, name+"."+n.Name, fld.Type)
		}
	}
}

// mentions reports whether comment c names the field name, as a word.
func mentions(c *ast.CommentGroup, name string) bool {
	return slices.Contains(strings.FieldsFunc(c.Text(), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	}), name)
}

// text is a doc comment as one line.
func text(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	return strings.Join(strings.Fields(g.Text()), " ")
}
