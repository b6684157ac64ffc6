package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/tools/evidencedoc"
)

// claims specs --evidence -o json is kubeproof.io/evidence/v1 and has every
// path each spec declares (evidence.Paths: what lint accepts), typed.
func TestEvidenceJSONHasEveryPath(t *testing.T) {
	code, out := runOut(t, "claims", "specs", "--evidence", "-o", "json")
	if code != exitcode.OK {
		t.Fatalf("exit %d: %s", code, out)
	}
	var doc evidencedoc.Document
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if doc.SchemaVersion != "kubeproof.io/evidence/v1" {
		t.Errorf("schemaVersion %q", doc.SchemaVersion)
	}
	have := map[string]evidencedoc.Path{}
	for _, p := range doc.Paths {
		have[p.Spec+" "+p.Path] = p
	}
	n := 0
	for _, d := range framework.DeclaredEvidence() {
		for _, path := range evidence.Paths(d.Name, d.Type) {
			n++
			p, ok := have[d.Spec+" "+path]
			if !ok {
				t.Errorf("%s %s: missing", d.Spec, path)
			} else if p.Type == "" || p.Source.File == "" {
				t.Errorf("%s %s: %+v, without a type or source", d.Spec, path, p)
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d declared paths", n)
	}
}

// With --report-dir a list's example is the list the run recorded.
func TestEvidenceReportDirListExample(t *testing.T) {
	dir := t.TempDir()
	rep := `{"specs": [{"id": "admission-sidecar", "evidence": {"stored": {"containers": ["app", "sidecar"]}}}]}`
	if err := os.WriteFile(filepath.Join(dir, "claims.json"), []byte(rep), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := runOut(t, "claims", "specs", "--evidence", "--report-dir", dir)
	if code != exitcode.OK {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "admission-sidecar" && f[1] == "stored.containers" {
			if !strings.HasSuffix(l, `["app","sidecar"]`) {
				t.Errorf("stored.containers: %q, want its example [\"app\",\"sidecar\"]", l)
			}
			return
		}
	}
	t.Errorf("no line for admission-sidecar stored.containers:\n%s", out)
}

// -o json is for --evidence; a report directory without claims.json is a
// usage error.
func TestEvidenceUsage(t *testing.T) {
	for _, args := range [][]string{
		{"claims", "specs", "-o", "json"},
		{"claims", "specs", "--evidence", "-o", "yaml"},
		{"claims", "specs", "--report-dir", "."},
		{"claims", "specs", "--evidence", "--report-dir", t.TempDir()},
	} {
		if code := exitFor(args...); code != exitcode.Usage {
			t.Errorf("kubeproof %v: exit %d, want %d", args, code, exitcode.Usage)
		}
	}
}
