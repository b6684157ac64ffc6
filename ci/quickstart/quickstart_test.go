package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README's marked code blocks are read with their names, argument,
// first line and text; a block without a mark is not a quick start.
func TestBlocks(t *testing.T) {
	readme := filepath.Join(t.TempDir(), "README.md")
	text := "# x\n\n```sh\nnot marked\n```\n\n<!-- quickstart: cluster -->\n```sh\nkubeproof run\necho done\n```\n\n" +
		"<!-- quickstart: ci docs/ci/cluster.yml -->\n\n```yaml\n- uses: a\n```\n"
	if err := os.WriteFile(readme, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	bs, err := blocks(readme)
	if err != nil {
		t.Fatal(err)
	}
	want := []block{{name: "cluster", line: 9, text: "kubeproof run\necho done\n"}, {name: "ci", arg: "docs/ci/cluster.yml", line: 16, text: "- uses: a\n"}}
	if len(bs) != len(want) {
		t.Fatalf("blocks %+v, want %+v", bs, want)
	}
	for i := range want {
		if bs[i] != want[i] {
			t.Errorf("block %d: %+v, want %+v", i, bs[i], want[i])
		}
	}
}

// The README's ci quick start stands in the recipe it names, line by line
// in order; a line not in it, or out of order, is a problem.
func TestStandsIn(t *testing.T) {
	t.Chdir("../..")
	bs, err := blocks("README.md")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]block{}
	for _, b := range bs {
		names[b.name] = b
	}
	for _, n := range []string{"cluster", "ci", "document"} {
		if _, ok := names[n]; !ok {
			t.Errorf("README.md has no quick start %q", n)
		}
	}
	ci := names["ci"]
	if p := standsIn(ci); p != nil {
		t.Errorf("README's ci quick start: %v", p)
	}
	lines := strings.Split(strings.TrimRight(ci.text, "\n"), "\n")
	if len(lines) < 2 {
		t.Fatalf("the ci quick start has %d lines", len(lines))
	}
	swapped := ci
	swapped.text = lines[len(lines)-1] + "\n" + lines[0] + "\n"
	if p := standsIn(swapped); len(p) != 1 || !strings.Contains(p[0], "is not in") {
		t.Errorf("lines out of order: %v", p)
	}
	changed := ci
	changed.text = ci.text + "      args: --not-in-the-recipe\n"
	if p := standsIn(changed); len(p) != 1 {
		t.Errorf("a line not in the recipe: %v", p)
	}
}
