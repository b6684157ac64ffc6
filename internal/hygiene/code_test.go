package hygiene

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxLines is the most lines a Go file other than a test may have: past
// it a file holds more than one thing, and what it holds wants a file (or
// a package) of its own. cmd/kubeproof holds its files to 450 lines
// already (internal/layering); no file is excepted here.
const maxLines = 400

// linesOver are the files allowed past maxLines, each with why; none now.
var linesOver = map[string]string{}

// noTests are the packages with no test of their own, each with why: what
// they do is tested elsewhere, whole.
var noTests = map[string]string{
	"claims/claimschema/gen":         "go generate's main: the schema it writes is held to the types by claimschema's TestShippedSchemaIsGenerated",
	"internal/tools/evidencedoc/gen": "go generate's main: what it writes is held to the source by gosource's TestGeneratedFilesAreCurrent",
	"internal/tools/jsonout/gen":     "go generate's main: the schemas it writes are held to the output types by jsonout's TestShippedSchemasAreGenerated",
	"cmd/kubeproof-webhook":          "a main that hands its flags to the webhooks package's server, whose handlers webhooks' tests check and the admission suites serve",
}

// root is the repository's root, two above this package.
const root = "../.."

// goFiles are the module's Go files, read (so that go test's cache keys on
// them, and a new file or package is never hidden by a cached pass), by
// path from the root; directories the go command skips are skipped.
func goFiles(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		out[filepath.ToSlash(rel)] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 200 {
		t.Fatalf("found only %d Go files", len(out))
	}
	return out
}

func TestFilesHoldOneThing(t *testing.T) {
	for path, data := range goFiles(t) {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		n := bytes.Count(data, []byte("\n"))
		if why, ok := linesOver[path]; ok {
			if n <= maxLines {
				t.Errorf("%s has %d lines: drop it from linesOver (%s)", path, n, why)
			}
			continue
		}
		if n > maxLines {
			t.Errorf("%s has %d lines, over %d: split it by what it holds", path, n, maxLines)
		}
	}
}

func TestEveryPackageHasATest(t *testing.T) {
	goFiles(t)
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{len .TestGoFiles}} {{len .XTestGoFiles}}", "./...")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var missing []string
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], "github.com/kubeproof/kubeproof/")
		seen[pkg] = true
		has := f[1] != "0" || f[2] != "0"
		_, excepted := noTests[pkg]
		switch {
		case has && excepted:
			t.Errorf("%s has a test now: drop it from noTests", pkg)
		case !has && !excepted:
			missing = append(missing, pkg)
		}
	}
	sort.Strings(missing)
	for _, pkg := range missing {
		t.Errorf("package %s has no test file: test what it does (or, if another package's tests hold it whole, say so in noTests)", pkg)
	}
	for pkg := range noTests {
		if !seen[pkg] {
			t.Errorf("noTests names %s, which is no package", pkg)
		}
	}
}
