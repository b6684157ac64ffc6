package imagebuild

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/internal/exitcode"
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

// A kubeproof with no programs beside it and no module version to build
// them from (a test binary, as a build in a checkout) says, as a missing
// tool, where they come from; it builds nothing.
func TestProgramsWithoutSource(t *testing.T) {
	t.Setenv("KUBEPROOF_PROGRAM_DIR", "")
	t.Setenv("KUBEPROOF_CACHE_DIR", t.TempDir())
	_, err := ProgramsFor(context.Background(), "arm64")
	if exitcode.Of(err) != exitcode.MissingTool || !strings.Contains(err.Error(), "make build") || !strings.Contains(err.Error(), "not from a module version") {
		t.Errorf("got %v", err)
	}
}
