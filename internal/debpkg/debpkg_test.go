package debpkg

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/internal/progress"
)

// fakeAptGet logs its calls and, like apt-get on a fresh machine, fails to
// install until the package lists were updated; then it installs by
// creating the file each package provides (named after the package).
const fakeAptGet = `#!/bin/sh
dir=$(dirname "$0")
echo "$DEBIAN_FRONTEND $*" >> "$dir/calls"
case "$1" in
update) touch "$dir/updated" ;;
install)
  [ -e "$dir/updated" ] || { for i in 1 2 3 4 5 6 7; do echo "line $i"; done; echo "E: Unable to locate package $4"; exit 100; }
  shift 3
  for p in "$@"; do touch "$dir/files/$p"; done ;;
esac
`

// Only what is missing is installed; a fresh machine's empty package lists
// are updated once and the install retried, non-interactively.
func TestEnsure(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "files"), 0o755); err != nil {
		t.Fatal(err)
	}
	aptGet := filepath.Join(dir, "apt-get")
	if err := os.WriteFile(aptGet, []byte(fakeAptGet), 0o755); err != nil {
		t.Fatal(err)
	}
	have := filepath.Join(dir, "files", "present")
	if err := os.WriteFile(have, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	pkgs := []Package{{"present", have}, {"conntrack", filepath.Join(dir, "files", "conntrack")}}
	if m := Missing(pkgs); len(m) != 1 || m[0].Name != "conntrack" {
		t.Fatalf("missing %v", m)
	}
	if err := install(context.Background(), aptGet, []string{"conntrack"}); err != nil {
		t.Fatal(err)
	}
	calls, _ := os.ReadFile(filepath.Join(dir, "calls"))
	want := "noninteractive install -y --no-install-recommends conntrack\nnoninteractive update\nnoninteractive install -y --no-install-recommends conntrack\n"
	if string(calls) != want {
		t.Errorf("calls:\n%s\nwant:\n%s", calls, want)
	}
	if m := Missing(pkgs); len(m) != 0 {
		t.Errorf("still missing %v", m)
	}
	if err := Ensure(context.Background(), pkgs, progress.Discard()); err != nil {
		t.Errorf("nothing missing: %v", err)
	}
}

// A failing apt-get says how it failed with the last lines it printed.
func TestAptError(t *testing.T) {
	dir := t.TempDir()
	aptGet := filepath.Join(dir, "apt-get")
	if err := os.WriteFile(aptGet, []byte(fakeAptGet), 0o755); err != nil {
		t.Fatal(err)
	}
	err := apt(context.Background(), aptGet, "install", "-y", "--no-install-recommends", "nosuch")
	if err == nil || !strings.HasSuffix(err.Error(), "exit status 100: line 4 | line 5 | line 6 | line 7 | E: Unable to locate package nosuch") {
		t.Errorf("error %v", err)
	}
}
