package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/claims"
)

// claims new writes a file claims lint accepts; lint finds a wrong
// evidence path, a type an expectation cannot hold and an unknown spec.
func TestClaimsNewThenLint(t *testing.T) {
	file := filepath.Join(t.TempDir(), "my-doc.yaml")
	root := newRootCommand()
	root.SetArgs([]string{"claims", "new", file, "--document", "my-doc.md", "--title", "My doc"})
	if err := root.Execute(); err != nil {
		t.Fatalf("claims new: %v", err)
	}
	if n, problems, hints := lintClaimsFile(file); n != 1 || len(problems) > 0 || len(hints) > 0 {
		t.Fatalf("lint of the new file: %d claims, problems %v, hints %v", n, problems, hints)
	}
	written, _ := os.ReadFile(file)
	for change, want := range map[string]string{
		"running.phase":   "has no field",
		"equals: Running": "wants a number",
		"podflow-create":  "does not exist",
	} {
		edited := map[string]string{"running.phase": "running.phaze", "equals: Running": "atLeast: 3", "podflow-create": "podflow-nope"}[change]
		if err := os.WriteFile(file, []byte(strings.Replace(string(written), change, edited, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		_, problems, _ := lintClaimsFile(file)
		if !strings.Contains(strings.Join(problems, "\n"), want) {
			t.Errorf("after %q -> %q: problems %v, want one saying %q", change, edited, problems, want)
		}
	}
}

// claims show points at the code: for every testable claim, each spec's
// place is the line of its It, and each evidence place the line that
// declares that evidence, in the repository's files.
func TestClaimsShowPointsAtTheCode(t *testing.T) {
	cat, err := (&selection{}).load()
	if err != nil {
		t.Fatal(err)
	}
	specs, decls := framework.ListSpecs(), framework.DeclaredEvidence()
	files := map[string][]string{}
	line := func(s claims.Source) string {
		lines, ok := files[s.File]
		if !ok {
			// The test runs in cmd/kubeproof, two below the root.
			data, err := os.ReadFile(filepath.Join("..", "..", s.File))
			if err != nil {
				t.Fatalf("%s: %v", s.File, err)
			}
			lines = strings.Split(string(data), "\n")
			files[s.File] = lines
		}
		if s.Line < 1 || s.Line > len(lines) {
			t.Fatalf("%s:%d: no such line", s.File, s.Line)
		}
		return lines[s.Line-1]
	}
	n := 0
	for _, c := range cat.Claims {
		if !c.Checked() {
			continue
		}
		sp, ev := claims.Locate(c, specs, decls)
		for _, s := range sp {
			if s.Source == nil {
				t.Errorf("%s: spec %s has no place", c.ID, s.ID)
				continue
			}
			if l := line(*s.Source); !strings.Contains(l, "It(") {
				t.Errorf("%s: spec %s at %s:%d, a line without its It: %q", c.ID, s.ID, s.Source.File, s.Source.Line, l)
			}
		}
		if len(ev) == 0 {
			t.Errorf("%s: no evidence declaration found", c.ID)
		}
		for _, e := range ev {
			if l := line(e.Source); !strings.Contains(l, "DeclareEvidence") || !strings.Contains(l, `"`+e.Name+`"`) {
				t.Errorf("%s: evidence %s at %s:%d, a line that does not declare it: %q", c.ID, e.Name, e.Source.File, e.Source.Line, l)
			}
		}
		n++
	}
	if n == 0 {
		t.Fatal("no testable claims")
	}
}
