package gosource

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kubeproof/kubeproof/framework/claims"
	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/internal/tools/evidencedoc"
)

// The packages the reading knows by path.
const (
	clusterPkg   = module + "/framework/cluster"
	frameworkPkg = module + "/framework"
)

// SpecNeeds reads, for each spec, the cluster capabilities its code checks
// for: in the function its It runs and, transitively, in the functions and
// methods of the module it calls (by name: a call of x.M follows a method M
// of the spec's package or of *Framework). f.Require(cluster.X) and
// f.Disturbs make a requirement (the spec skips without it); any other
// mention of a capability constant (f.Cluster.Has, Missing, what
// f.AuditLog and f.Etcd check) makes a use: without it the spec records
// less or marks evidence unobservable. It is a reading of the source, not
// of what runs: a check behind a function value or an interface is missed.
func SpecNeeds(root string, specs []claims.SpecInfo) (map[string]evidencedoc.SpecNeeds, error) {
	r := &reader{root: root, pkgs: map[string]*pkg{}}
	caps, err := r.capabilities()
	if err != nil {
		return nil, err
	}
	r.caps = caps
	out := map[string]evidencedoc.SpecNeeds{}
	for _, s := range specs {
		if s.ID == "" || s.Source.File == "" {
			continue
		}
		body, p, err := r.itBody(s.Source)
		if err != nil {
			return nil, fmt.Errorf("spec %s: %w", s.ID, err)
		}
		found := &needs{required: map[cluster.Capability]bool{}, used: map[cluster.Capability]bool{}}
		r.walk(p, p.imports[s.Source.File], body, found, map[string]bool{})
		n := evidencedoc.SpecNeeds{Requires: []cluster.Capability{}, Uses: []cluster.Capability{}}
		for c := range found.required {
			n.Requires = append(n.Requires, c)
		}
		for c := range found.used {
			if !found.required[c] {
				n.Uses = append(n.Uses, c)
			}
		}
		slices.Sort(n.Requires)
		slices.Sort(n.Uses)
		out[s.ID] = n
	}
	return out, nil
}

type needs struct{ required, used map[cluster.Capability]bool }

// pkg is one package of the module, parsed.
type pkg struct {
	path  string
	files map[string]*ast.File
	// imports are, by file (as claims.Source names it), its imports by
	// the name the file uses.
	imports map[string]map[string]string
	// funcs are its functions by name, methods by "Recv.Name".
	funcs map[string]fn
	fset  *token.FileSet
}

type fn struct {
	decl *ast.FuncDecl
	file string
}

type reader struct {
	root string
	pkgs map[string]*pkg
	caps map[string]cluster.Capability
}

// load parses the package at import path p (of the module), once.
func (r *reader) load(p string) (*pkg, error) {
	if k, ok := r.pkgs[p]; ok {
		return k, nil
	}
	rel, ok := strings.CutPrefix(p, module+"/")
	if !ok {
		return nil, fmt.Errorf("%s is not a package of the module", p)
	}
	k := &pkg{path: p, files: map[string]*ast.File{}, imports: map[string]map[string]string{}, funcs: map[string]fn{}, fset: token.NewFileSet()}
	r.pkgs[p] = k
	dir := filepath.Join(r.root, filepath.FromSlash(rel))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read the source of %s: %w", p, err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(k.fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("read the source of %s: %w", p, err)
		}
		file := rel + "/" + e.Name()
		k.files[file] = f
		imps := map[string]string{}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			name := path.Base(ip)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			imps[name] = ip
		}
		k.imports[file] = imps
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			k.funcs[funcName(fd)] = fn{decl: fd, file: file}
		}
	}
	return k, nil
}

// funcName is "Name" for a function, "Recv.Name" for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// capabilities are the Capability constants of package cluster, by name.
func (r *reader) capabilities() (map[string]cluster.Capability, error) {
	k, err := r.load(clusterPkg)
	if err != nil {
		return nil, err
	}
	out := map[string]cluster.Capability{}
	for _, f := range k.files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				if t, ok := vs.Type.(*ast.Ident); !ok || t.Name != "Capability" {
					continue
				}
				for i, n := range vs.Names {
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
						v, _ := strconv.Unquote(lit.Value)
						out[n.Name] = cluster.Capability(v)
					}
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no Capability constants in %s", clusterPkg)
	}
	return out, nil
}

// itBody finds the function an It at src runs: the last function literal
// among the arguments of the call on that line.
func (r *reader) itBody(src claims.Source) (*ast.FuncLit, *pkg, error) {
	p, err := r.load(module + "/" + path.Dir(src.File))
	if err != nil {
		return nil, nil, err
	}
	f, ok := p.files[src.File]
	if !ok {
		return nil, nil, fmt.Errorf("no file %s", src.File)
	}
	var body *ast.FuncLit
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || body != nil || p.fset.Position(call.Pos()).Line != src.Line {
			return body == nil
		}
		for _, a := range call.Args {
			if lit, ok := a.(*ast.FuncLit); ok {
				body = lit
			}
		}
		return body == nil
	})
	if body == nil {
		return nil, nil, fmt.Errorf("no It with a function at %s:%d", src.File, src.Line)
	}
	return body, p, nil
}

// walk adds what n (code of package p, in a file with imports imps) checks
// to found, following the calls it makes into the module.
func (r *reader) walk(p *pkg, imps map[string]string, n ast.Node, found *needs, seen map[string]bool) {
	ast.Inspect(n, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && imps[id.Name] == clusterPkg {
				if c, ok := r.caps[x.Sel.Name]; ok {
					found.used[c] = true
				}
			}
		case *ast.CallExpr:
			switch fun := x.Fun.(type) {
			case *ast.Ident:
				r.follow(p, fun.Name, found, seen)
			case *ast.SelectorExpr:
				switch fun.Sel.Name {
				case "Require":
					if len(x.Args) == 1 {
						if sel, ok := x.Args[0].(*ast.SelectorExpr); ok {
							if id, ok := sel.X.(*ast.Ident); ok && imps[id.Name] == clusterPkg {
								if c, ok := r.caps[sel.Sel.Name]; ok {
									found.required[c] = true
								}
							}
						}
					}
				case "Disturbs":
					found.required[cluster.Disposable] = true
				}
				if id, ok := fun.X.(*ast.Ident); ok && strings.HasPrefix(imps[id.Name], module+"/") {
					if q, err := r.load(imps[id.Name]); err == nil {
						r.follow(q, fun.Sel.Name, found, seen)
					}
					return true
				}
				// A method: of the package's own types, or of *Framework.
				for name, f := range p.funcs {
					if strings.HasSuffix(name, "."+fun.Sel.Name) {
						r.visit(p, name, f, found, seen)
					}
				}
				if fw, err := r.load(frameworkPkg); err == nil {
					r.follow(fw, "Framework."+fun.Sel.Name, found, seen)
				}
			}
		}
		return true
	})
}

func (r *reader) follow(p *pkg, name string, found *needs, seen map[string]bool) {
	if f, ok := p.funcs[name]; ok {
		r.visit(p, name, f, found, seen)
	}
}

func (r *reader) visit(p *pkg, name string, f fn, found *needs, seen map[string]bool) {
	key := p.path + "." + name
	if seen[key] {
		return
	}
	seen[key] = true
	r.walk(p, p.imports[f.file], f.decl.Body, found, seen)
}
