package suites

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Specs ask for a capability through their Framework (f.Has, f.Require,
// f.AuditLog, f.Etcd), which fails a spec that did not declare it beside
// its ID (framework.Checks: Requires, Uses, Disturbs): asked of the
// cluster directly, the question escapes that check and the evidence
// catalog would not show the need. A probe (suites/probes) declares what it
// requires in its claims file, which its runtime reads there.
func TestCapabilitiesAskedThroughTheFramework(t *testing.T) {
	direct := regexp.MustCompile(`\.Cluster\.(Has|Missing)\(`)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && path == "probes" {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if direct.MatchString(line) {
				t.Errorf("suites/%s:%d asks the cluster directly: use f.Has or f.Missing (and declare the capability in framework.Checks): %s", filepath.ToSlash(path), i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A spec's ID is declared in the file of its It, above its Describe: the
// reader of the It finds its ID (and the claims file names it) without
// looking elsewhere. Checks takes a constant of that file, or a literal.
func TestSpecIDBesideItsIt(t *testing.T) {
	fset := token.NewFileSet()
	n := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		consts := map[string]bool{}
		for _, decl := range f.Decls {
			if gd, ok := decl.(*ast.GenDecl); ok && gd.Tok == token.CONST {
				for _, s := range gd.Specs {
					for _, name := range s.(*ast.ValueSpec).Names {
						consts[name.Name] = true
					}
				}
			}
		}
		ast.Inspect(f, func(node ast.Node) bool {
			call, ok := node.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Checks" {
				return true
			}
			n++
			switch id := call.Args[0].(type) {
			case *ast.BasicLit:
			case *ast.Ident:
				if !consts[id.Name] {
					t.Errorf("%s: the spec ID %s is not declared in this file, beside its It", fset.Position(call.Pos()), id.Name)
				}
			default:
				t.Errorf("%s: Checks takes the spec's ID as a constant of the file or a literal", fset.Position(call.Pos()))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 50 {
		t.Errorf("found %d calls of Checks", n)
	}
}
