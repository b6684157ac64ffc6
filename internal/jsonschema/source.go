package jsonschema

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// source is what the Go source says about the types: doc comments by key,
// and for each named string type the values of its typed constants.
type source struct {
	docs  map[string]string
	enums map[string][]string
}

// readSource reads the packages of the module that hold t and the types it
// holds.
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
		if strings.HasPrefix(t.PkgPath(), Module+"/") {
			pkgs[t.PkgPath()] = true
		}
		if t.Kind() == reflect.Struct {
			for _, f := range append(reflect.VisibleFields(t), oneOf(t)...) {
				walk(f.Type)
			}
		}
	}
	walk(t)
	for _, p := range slices.Sorted(maps.Keys(pkgs)) {
		if err := src.read(filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(p, Module+"/")))); err != nil {
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
		return fmt.Errorf("read the source of the types: %w", err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			return fmt.Errorf("read the source of the types: %w", err)
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
