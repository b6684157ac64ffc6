package imagebuild

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Programs names every program the repository has besides kubeproof (the
// Makefile builds the same set, cmd/* and internal/provision/cmd/*), so a
// kubeproof that builds them from its module source misses none.
func TestProgramsAreEveryProgram(t *testing.T) {
	root := "../../../.."
	var want []string
	for _, pattern := range []string{"cmd/*/main.go", "internal/provision/cmd/*/main.go"} {
		mains, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mains {
			pkg, _ := filepath.Rel(root, filepath.Dir(m))
			if pkg != "cmd/kubeproof" {
				want = append(want, pkg)
			}
		}
	}
	var got []string
	for _, p := range Programs {
		got = append(got, p.Package)
		if filepath.Base(p.Package) != p.Name {
			t.Errorf("program %s is built from %s: its binary would be named otherwise", p.Name, p.Package)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("Programs: %s\nthe repository's: %s", strings.Join(got, " "), strings.Join(want, " "))
	}
}
