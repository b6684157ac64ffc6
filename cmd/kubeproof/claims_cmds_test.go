package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
