package gosource

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/internal/tools/evidencedoc"
	_ "github.com/kubeproof/kubeproof/suites"
)

// The test runs in this package's directory, four below the repository's
// root.
const root = "../../../.."

// The generated files, relative to the root.
const (
	sourceFile = "internal/tools/evidencedoc/source.json"
	pageFile   = "docs/evidence.md"
)

// maxMissing is how many of the suites' evidence paths have no doc comment
// to mean anything by. It may only go down: write the comment (one short
// line on the struct field) rather than raise it.
const maxMissing = 0

func generate(t *testing.T) (source, page []byte) {
	t.Helper()
	cat, err := claims.LoadAt(fixtures.Claims(), fixtures.ClaimsDir)
	if err != nil {
		t.Fatal(err)
	}
	source, page, err = Generate(root, framework.DeclaredEvidence(), cat, framework.ListSpecs())
	if err != nil {
		t.Fatal(err)
	}
	return source, page
}

// source.json and docs/evidence.md are what the source and the catalog
// make now.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	source, page := generate(t)
	for file, want := range map[string][]byte{sourceFile: source, pageFile: page} {
		got, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what the suites' source and the claims make now: run go generate ./internal/tools/evidencedoc", file)
		}
	}
}

// The embedded source is the committed file's.
func TestBuiltinIsTheFile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, sourceFile))
	if err != nil {
		t.Fatal(err)
	}
	want, err := evidencedoc.DecodeSource(data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := evidencedoc.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the binary does not embed %s", sourceFile)
	}
}

// The paths without a meaning, pinned so that their number only goes down.
func TestMissingMeanings(t *testing.T) {
	m, err := Meanings(root, framework.DeclaredEvidence())
	if err != nil {
		t.Fatal(err)
	}
	total, missing := 0, 0
	for _, d := range framework.DeclaredEvidence() {
		for _, n := range evidencedoc.Expand(d.Name, d.Type) {
			total++
			if _, ok := m[d.Spec][n.Path]; !ok {
				missing++
				if testing.Verbose() {
					t.Logf("%s %s: no doc comment (%s)", d.Spec, n.Path, n.DocKey)
				}
			}
		}
	}
	t.Logf("%d of %d evidence paths have no meaning", missing, total)
	switch {
	case missing > maxMissing:
		t.Errorf("%d evidence paths have no meaning, more than %d: write a doc comment on the struct field (or the evidence's type) of each new one (go test -v lists them)", missing, maxMissing)
	case missing < maxMissing:
		t.Errorf("%d evidence paths have no meaning, fewer than %d: lower maxMissing to %d", missing, maxMissing, missing)
	}
}

// Meanings come from where the doc says: the evidence's declaration (or
// else its type) for the evidence itself, the field's comment below it (or that of the fields
// written with it, when it names the field), the container's for a list's
// element.
func TestMeaningSources(t *testing.T) {
	m, err := Meanings(root, framework.DeclaredEvidence())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ spec, path, from string }{
		{"admission-concurrency", "mutating", "type admission.mutatingEvidence"},
		{"apiserver-rbac", "correction", "declaration apiserver.correction"},
		{"kubelet-cri", "cri.calls", "field kubelet.criEvidence.Calls"},
		{"kubelet-cri", "cri.calls.{key}", "field kubelet.criEvidence.Calls"},
		// "Attempts are ...; IntervalsMs the time between them."
		{"controllers-retry", "workqueueRetry.intervalsMs", "field controllers.retryEvidence.IntervalsMs"},
		// Named by the comment of a field two above it.
		{"apiserver-etcd-stopped", "etcdStopped.latestReadServed", "field apiserver.etcdStoppedEvidence.LatestReadServed"},
	} {
		got, ok := m[c.spec][c.path]
		if !ok || got.From != c.from || got.Text == "" {
			t.Errorf("%s %s: %+v, want a meaning from %s", c.spec, c.path, got, c.from)
		}
	}
}
