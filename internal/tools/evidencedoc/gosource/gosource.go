// Package gosource reads what the suites' Go source says about their
// evidence: what each path means (the doc comment above a DeclareEvidence
// call, or its var, or the evidence type's, for the evidence itself; each
// struct field's for the paths below it) and the cluster capabilities each
// spec's code checks for. go generate runs it (../gen) into source.json,
// which the binary embeds, since the binary carries no source; a test
// fails when that file, or docs/evidence.md, is not what it makes now.
package gosource

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"unicode"

	"github.com/kubeproof/kubeproof/framework/claims"
	"github.com/kubeproof/kubeproof/internal/tools/evidencedoc"
)

const module = "github.com/kubeproof/kubeproof"

// Generate returns the two generated files: source.json (the meanings of
// decls' paths and the needs of specs, read from the source under root)
// and docs/evidence.md (decls explained with those, the requires: of cat's
// claims, and the specs' texts).
func Generate(root string, decls []claims.EvidenceDecl, cat *claims.Catalog, specs []claims.SpecInfo) (source, markdown []byte, err error) {
	m, err := Meanings(root, decls)
	if err != nil {
		return nil, nil, err
	}
	needs, err := SpecNeeds(root, specs)
	if err != nil {
		return nil, nil, err
	}
	source, err = evidencedoc.EncodeSource(evidencedoc.Source{Meanings: m, Specs: needs})
	if err != nil {
		return nil, nil, err
	}
	names := map[string]string{}
	for _, s := range specs {
		names[s.ID] = s.Name
	}
	doc := evidencedoc.Build(evidencedoc.Input{Decls: decls, Meanings: m, SpecNeeds: needs, Catalog: cat})
	return source, evidencedoc.Markdown(doc, names), nil
}

// Meanings reads the meaning of every path of decls from the Go source
// under root (the repository's root). A path whose declaration has no doc
// comment is left out.
func Meanings(root string, decls []claims.EvidenceDecl) (evidencedoc.Meanings, error) {
	src := &source{fields: map[string]doc{}, types: map[string]doc{}, decls: map[string][]declDoc{}, read: map[string]bool{}}
	for _, d := range decls {
		if err := src.readDir(root, filepath.Dir(d.Source.File)); err != nil {
			return nil, err
		}
		if err := src.readTypes(root, d.Type); err != nil {
			return nil, err
		}
	}
	out := evidencedoc.Meanings{}
	for _, d := range decls {
		if out[d.Spec] == nil {
			out[d.Spec] = map[string]evidencedoc.Meaning{}
		}
		for _, n := range evidencedoc.Expand(d.Name, d.Type) {
			if m, ok := src.meaning(d, n); ok {
				out[d.Spec][n.Path] = m
			}
		}
	}
	return out, nil
}

// doc is a doc comment and what it documents ("type scaleUpEvidence").
type doc struct{ text, what string }

// declDoc is the doc comment of a package-level var spec and the lines it
// spans (a DeclareEvidence call in them is documented by it).
type declDoc struct {
	doc
	from, to int
}

type source struct {
	// fields and types are by key: "<package path>.<type>[.<field>...]".
	fields, types map[string]doc
	// decls are by file, as claims.Source names it.
	decls map[string][]declDoc
	read  map[string]bool
}

// meaning is n's: a field's doc comment, else (for an object or the
// evidence itself) its type's; the evidence itself first its declaration's.
func (s *source) meaning(d claims.EvidenceDecl, n evidencedoc.Node) (evidencedoc.Meaning, bool) {
	if n.Path == d.Name {
		for _, dd := range s.decls[d.Source.File] {
			if dd.from <= d.Source.Line && d.Source.Line <= dd.to && dd.text != "" {
				return evidencedoc.Meaning{Text: dd.text, From: dd.what}, true
			}
		}
	} else if f, ok := s.fields[n.DocKey]; ok && f.text != "" {
		return evidencedoc.Meaning{Text: f.text, From: f.what}, true
	}
	if n.DocKey == "" && n.Path != d.Name {
		return evidencedoc.Meaning{}, false // a list element or map value
	}
	if t, ok := s.types[n.Type.PkgPath()+"."+n.Type.Name()]; ok && n.Type.Name() != "" && t.text != "" {
		return evidencedoc.Meaning{Text: t.text, From: t.what}, true
	}
	return evidencedoc.Meaning{}, false
}

// readTypes reads the packages of the module that t and the types it holds
// are declared in.
func (s *source) readTypes(root string, t reflect.Type) error {
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
		if rel, ok := strings.CutPrefix(t.PkgPath(), module+"/"); ok {
			if err := s.readDir(root, rel); err != nil {
				return err
			}
		}
		if t.Kind() == reflect.Struct {
			for _, f := range reflect.VisibleFields(t) {
				if err := walk(f.Type); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(t)
}

// readDir reads the doc comments of the package in dir (relative to root,
// slash-separated), its tests aside.
func (s *source) readDir(root, dir string) error {
	dir = filepath.ToSlash(dir)
	if s.read[dir] {
		return nil
	}
	s.read[dir] = true
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
	if err != nil {
		return fmt.Errorf("read the source of the evidence: %w", err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(root, filepath.FromSlash(dir), e.Name()), nil, parser.ParseComments)
		if err != nil {
			return fmt.Errorf("read the source of the evidence: %w", err)
		}
		s.file(fset, module+"/"+dir, dir+"/"+e.Name(), f)
	}
	return nil
}

func (s *source) file(fset *token.FileSet, pkgPath, file string, f *ast.File) {
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
				s.types[key] = doc{text(c), "type " + pkg + "." + sp.Name.Name}
				s.structFields(fset, key, pkg+"."+sp.Name.Name, sp.Type)
			case *ast.ValueSpec:
				if gd.Tok != token.VAR || len(sp.Names) == 0 {
					continue
				}
				c := sp.Doc
				if c == nil {
					c = sp.Comment
				}
				if c == nil && len(gd.Specs) == 1 {
					c = gd.Doc
				}
				s.decls[file] = append(s.decls[file], declDoc{
					doc:  doc{text(c), "declaration " + pkg + "." + sp.Names[0].Name},
					from: fset.Position(sp.Pos()).Line, to: fset.Position(sp.End()).Line,
				})
			}
		}
	}
}

// structFields records the doc comments of the fields of the struct that
// t is (or holds, for an anonymous one in a list, map or pointer), under
// key and for readers under name.
func (s *source) structFields(fset *token.FileSet, key, name string, t ast.Expr) {
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
		names := fld.Names
		if len(names) == 0 {
			// An embedded field: its fields are promoted, keyed by its
			// own type unless it is anonymous, which cannot be embedded.
			continue
		}
		for _, n := range names {
			d := doc{text(c), "field " + name + "." + n.Name}
			if c == nil {
				if i := slices.IndexFunc(block, func(c *ast.CommentGroup) bool { return mentions(c, n.Name) }); i >= 0 {
					d.text = text(block[i])
				}
			}
			s.fields[key+"."+n.Name] = d
			s.structFields(fset, key+"."+n.Name, name+"."+n.Name, fld.Type)
		}
	}
}

// mentions reports whether comment c names the field name, as a word.
func mentions(c *ast.CommentGroup, name string) bool {
	if c == nil {
		return false
	}
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
