package claimlint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/kubeproof/kubeproof/suites"
)

const file = `apiVersion: kubeproof.io/v1alpha1
kind: Claims
document: {file: mine.md, title: Mine}
claims:
- id: MINE-SECCOMP
  section: s
  quote: A container filters its system calls.
  statement: st
  component: kubelet
  kind: behaviour
  specs: [kubelet-seccomp]
  expect:
  - {evidence: seccomp.default, equals: "2"}
- id: MINE-PROBED
  section: s
  quote: An audited request is recorded.
  statement: st
  component: kube-apiserver
  kind: behaviour
  specs: [mine-probe]
  expect:
  - {evidence: api.count, atLeast: 1}
probes:
- id: mine-probe
  description: a request the audit log records
  observe:
  - name: api
    audit: {resource: pods}
  steps:
  - kubectl: [get, pods]
`

func write(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mine.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A file lints against this binary's specs, its own probes and the
// document: a claim that reads a probe's audit observer without requiring
// AuditLog, a path no spec records, a spec that does not exist and a quote
// the document lacks are each one problem.
func TestFile(t *testing.T) {
	doc := &Document{Name: "mine.md", Text: "# Mine\n\nA container filters its system calls.\nAn audited request is recorded.\n"}
	n, problems, hints, warnings := File(write(t, strings.Replace(file, "  specs: [mine-probe]\n", "  specs: [mine-probe]\n  requires: [AuditLog]\n", 1)), doc)
	if n != 2 || len(problems) != 0 || len(hints) != 0 || len(warnings) != 0 {
		t.Fatalf("a good file: %d claims, problems %v, hints %v, warnings %v", n, problems, hints, warnings)
	}
	bad := strings.Replace(file, "seccomp.default", "seccomp.defualt", 1)
	bad = strings.Replace(bad, "An audited request", "An audited call", 1)
	bad = strings.Replace(bad, "[kubelet-seccomp]", "[kubelet-seccomp, no-such-spec]", 1)
	_, problems, _, _ = File(write(t, bad), doc)
	all := strings.Join(problems, "\n")
	for _, want := range []string{
		"claim MINE-PROBED: reads api, an observer of probe mine-probe that needs capability AuditLog",
		"claim MINE-SECCOMP: evidence seccomp.defualt",
		"claim MINE-SECCOMP names spec no-such-spec, which does not exist",
		"MINE-PROBED",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
	if len(problems) != 4 {
		t.Errorf("%d problems:\n%s", len(problems), all)
	}
}

// Without the document, the placeholder quote of claims new is refused;
// a probe may not take a built-in spec's ID; a file that does not load
// gives its loader's problems, one a line, and one without the header a
// hint.
func TestFileWithoutDocument(t *testing.T) {
	text := strings.Replace(file, "A container filters its system calls.", ScaffoldQuote, 1)
	text = strings.ReplaceAll(text, "mine-probe", "kubelet-seccomp")
	_, problems, _, _ := File(write(t, text), nil)
	all := strings.Join(problems, "\n")
	for _, want := range []string{"the quote is the placeholder", "probe kubelet-seccomp: the ID is a built-in spec's"} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
	_, problems, _, _ = File(write(t, strings.Replace(file, "kind: behaviour", "kind: vibe", 1)), nil)
	if len(problems) != 1 || !strings.Contains(problems[0], `kind "vibe" is not one of`) {
		t.Errorf("a claim of no kind: %v", problems)
	}
	_, _, hints, _ := File(write(t, strings.Replace(file, "apiVersion: kubeproof.io/v1alpha1\nkind: Claims\n", "", 1)), nil)
	if len(hints) != 1 || !strings.Contains(hints[0], "has no header") {
		t.Errorf("hints %v", hints)
	}
	if got := ProblemsOf(errors.New("invalid claims catalog:\n  a\n\n  b\n")); strings.Join(got, "|") != "a|b" {
		t.Errorf("ProblemsOf %q", got)
	}
}
