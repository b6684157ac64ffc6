package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/claims/speclink"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/runner"
	"github.com/kubeproof/kubeproof/internal/tools/claimlint"
)

// claims new writes a file whose only problem is its placeholder quote;
// with the document's sentence quoted, lint accepts it, and finds a wrong
// evidence path (naming the nearest), a type an expectation cannot hold and
// an unknown spec.
func TestClaimsNewThenLint(t *testing.T) {
	file := filepath.Join(t.TempDir(), "my-doc.yaml")
	root := newRootCommand()
	root.SetArgs([]string{"claims", "new", file, "--document", "my-doc.md", "--title", "My doc"})
	if err := root.Execute(); err != nil {
		t.Fatalf("claims new: %v", err)
	}
	doc := &claimlint.Document{Name: "my-doc.md", Text: "# My doc\n\nA created Pod\nreaches phase Running.\n"}
	for _, tc := range []struct {
		doc  *claimlint.Document
		want string
	}{
		{nil, "claim MY-DOC-POD-RUNNING: the quote is the placeholder `claims new` wrote"},
		{doc, "claim MY-DOC-POD-RUNNING: quote not found in my-doc.md: «the sentence of the document, as written»"},
	} {
		if _, problems, _, _ := claimlint.File(file, tc.doc); len(problems) != 1 || problems[0] != tc.want && !strings.HasPrefix(problems[0], tc.want) {
			t.Errorf("lint of the new file (document %v): problems %q, want %q", tc.doc != nil, problems, tc.want)
		}
	}
	written, _ := os.ReadFile(file)
	quoted := strings.Replace(string(written), claimlint.ScaffoldQuote, "A created Pod reaches phase Running.", 1)
	if err := os.WriteFile(file, []byte(quoted), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*claimlint.Document{nil, doc} {
		if n, problems, hints, _ := claimlint.File(file, d); n != 1 || len(problems) > 0 || len(hints) > 0 {
			t.Fatalf("lint of the quoted file: %d claims, problems %v, hints %v", n, problems, hints)
		}
	}
	for _, tc := range []struct{ change, edited, want string }{
		{"running.phase", "running.phaze", `claim MY-DOC-POD-RUNNING: evidence running.phaze: podflow-create: running has no field "phaze"`},
		{"running.phase", "running.phaze", "; nearest: running.phase, "},
		{"running.phase", "runing.phase", "is recorded by none of its specs [podflow-create]; nearest: running.phase"},
		{"equals: Running", "atLeast: 3", "wants a number"},
		{"podflow-create", "podflow-nope", "does not exist"},
		{"kind: behaviour", "kind: behaviour\n  verdict: confirmed", `my-doc.yaml:20: claim MY-DOC-POD-RUNNING: unknown field "verdict"`},
		{"kind: behaviour", "kind: behaviour\n  conditional: [{condition: where it holds, expect: [{evidence: running.phase, equals: Pending}]}]", `claim MY-DOC-POD-RUNNING: condition "where it holds" restricts the claim to where it holds`},
		{"specs: [podflow-create]", "specs: podflow-create", "my-doc.yaml:20: claim MY-DOC-POD-RUNNING: specs: a string where the field is of type []string"},
		{"id: MY-DOC-POD-RUNNING", "id: 004-CREATED-201", "claim 004-CREATED-201 (my-doc.md): the ID is already a claim of the built-in catalog (004_6e140b62836917bf.txt, fixtures/claims/004_6e140b62836917bf.yaml:"},
	} {
		if err := os.WriteFile(file, []byte(strings.Replace(quoted, tc.change, tc.edited, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		_, problems, _, _ := claimlint.File(file, nil)
		if !strings.Contains(strings.Join(problems, "\n"), tc.want) {
			t.Errorf("after %q -> %q: problems %q, want one saying %q", tc.change, tc.edited, problems, tc.want)
		}
	}
}

// lint counts its problems in words; run and report refuse a claims file
// lint refuses, as a usage error, before anything runs.
func TestClaimsFileProblemsStopEarly(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mine.yaml")
	one := strings.Replace(claimsTemplate, "%[8]s", "q", 1)
	body := fmt.Sprintf(one, "mine.md", file, "Mine", "MINE", claimsSchemaURL, claims.APIVersion, claims.FileKind)
	two := strings.Replace(strings.Replace(body, "running.phase", "running.phaze", 1), "podflow-create", "podflow-nope", 1)
	for _, tc := range []struct {
		body string
		want string
	}{{strings.Replace(body, "running.phase", "running.phaze", 1), ": 1 problem"}, {two, ": 2 problems"}} {
		if err := os.WriteFile(file, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		root := newRootCommand()
		root.SetArgs([]string{"claims", "lint", file})
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		err := root.Execute()
		if err == nil || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("claims lint: %v, want ...%s", err, tc.want)
		}
	}
	if err := os.WriteFile(file, []byte(strings.Replace(body, "running.phase", "running.phaze", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "--dry-run", "--claims-file", file},
		{"report", "--claims-file", file, "--report-dir", dir},
		{"claims", "lint", file},
	} {
		if code := exitFor(args...); code != exitcode.LintFindings {
			t.Errorf("%v: exit code %d, want %d", args, code, exitcode.LintFindings)
		}
	}
	// A file that is not there is a misused command, not a finding.
	for _, args := range [][]string{
		{"run", "--dry-run", "--claims-file", file + ".missing"},
		{"claims", "lint", file + ".missing"},
	} {
		if code := exitFor(args...); code != exitcode.Usage {
			t.Errorf("%v: exit code %d, want %d", args, code, exitcode.Usage)
		}
	}
	sel := &selection{claimsFile: file, lint: true}
	_, err := sel.load()
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "claim MINE-POD-RUNNING: evidence running.phaze") || !strings.Contains(err.Error(), "nearest: running.phase") {
		t.Errorf("run's error: %v, want one line naming the claim and the nearest path", err)
	}
	// A quote not in the document --document names is a problem too.
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	docPath := filepath.Join(dir, "mine.md")
	if err := os.WriteFile(docPath, []byte("nothing here"), 0o644); err != nil {
		t.Fatal(err)
	}
	sel = &selection{claimsFile: file, documents: []string{docPath}, lint: true}
	if _, err := sel.load(); err == nil || !strings.Contains(err.Error(), "claim MINE-POD-RUNNING: quote not found in "+docPath+": «q»") {
		t.Errorf("a quote not in --document: %v", err)
	}
}

// With --claims-file, the selection is the file's claims (narrowed by
// --claims and --document, the document also by its path), not the
// built-in catalog's; a run's dry run lists them, and those no spec
// checks.
func TestClaimsFileIsTheSelection(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mine.yaml")
	body := fmt.Sprintf(strings.Replace(claimsTemplate, "%[8]s", "q", 1), "mine.md", file, "Mine", "MINE", claimsSchemaURL, claims.APIVersion, claims.FileKind) +
		"- {id: MINE-EVICT, section: s, quote: q, statement: s, component: c, kind: behaviour, open: a spec that deletes a node}\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	docPath := filepath.Join(dir, "mine.md")
	if err := os.WriteFile(docPath, []byte("q"), 0o644); err != nil {
		t.Fatal(err)
	}
	ids := func(cs []claims.Claim) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	for _, tc := range []struct {
		sel  selection
		want []string
		err  string
	}{
		{selection{claimsFile: file}, []string{"MINE-POD-RUNNING", "MINE-EVICT"}, ""},
		{selection{claimsFile: file, documents: []string{"mine"}}, []string{"MINE-POD-RUNNING", "MINE-EVICT"}, ""},
		{selection{claimsFile: file, documents: []string{docPath}}, []string{"MINE-POD-RUNNING", "MINE-EVICT"}, ""},
		{selection{claimsFile: file, claimIDs: []string{"MINE-EVICT"}}, []string{"MINE-EVICT"}, ""},
		{selection{claimsFile: file, claimIDs: []string{"004-CREATED-201"}}, nil, `"004-CREATED-201" is not a claim of --claims-file`},
		{selection{claimsFile: file, documents: []string{"004"}}, nil, `no document "004" in --claims-file`},
	} {
		_, got, err := tc.sel.selected()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%+v: %v, want %s", tc.sel, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(ids(got), tc.want) {
			t.Errorf("%+v: %v, %v, want %v", tc.sel, ids(got), err, tc.want)
		}
		if !tc.sel.restricted() {
			t.Errorf("%+v: a run of a claims file runs all specs", tc.sel)
		}
	}
	// The dry run of a selection of claims without specs says so, and
	// lists them.
	_, open, _ := (&selection{claimsFile: file, claimIDs: []string{"MINE-EVICT"}}).selected()
	var out strings.Builder
	_, stop, err := checkSelection(context.Background(), &out, open, nil, runner.SpecFilter(open, ""), nil, nil, true, "table")
	if !stop || err != nil || !strings.Contains(out.String(), "would run no spec") || !strings.Contains(out.String(), "MINE-EVICT") || !strings.Contains(out.String(), "open: a spec that deletes a node") {
		t.Errorf("dry run: stop %t, err %v:\n%s", stop, err, out.String())
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
	line := func(s evidence.Source) string {
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
		sp, ev := speclink.Locate(c, specs, decls)
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

// claims new --quote writes the document's sentence into the first claim:
// the file lints clean against the document as it is written.
func TestClaimsNewWithQuote(t *testing.T) {
	dir := t.TempDir()
	docPath := filepath.Join(dir, "my-doc.md")
	if err := os.WriteFile(docPath, []byte("# Pods\n\nA created Pod reaches phase Running.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "my-doc.yaml")
	if code := exitFor("claims", "new", file, "--document", docPath, "--quote", "A created Pod reaches phase Running."); code != exitcode.OK {
		t.Fatalf("claims new --quote: exit %d", code)
	}
	if code := exitFor("claims", "lint", file, "--document", docPath); code != exitcode.OK {
		t.Errorf("claims lint of the new file: exit %d", code)
	}
	if code := exitFor("claims", "new", filepath.Join(dir, "other.yaml"), "--quote", `a "quoted" one`); code != exitcode.Usage {
		t.Errorf("a quote with a double quote: exit %d, want %d", code, exitcode.Usage)
	}
}

// --claims and --document narrow each other: a document given for its
// quotes does not widen a selection of a few claims to all of its claims.
func TestClaimsAndDocumentNarrowEachOther(t *testing.T) {
	cat, err := (&selection{}).load()
	if err != nil {
		t.Fatal(err)
	}
	s := &selection{claimIDs: []string{"000-BINDING-OBJECT"}, documents: []string{"000"}}
	if cs, err := s.pick(cat); err != nil || len(cs) != 1 || cs[0].ID != "000-BINDING-OBJECT" {
		t.Errorf("--claims 000-BINDING-OBJECT --document 000: %v, %v", cs, err)
	}
	s.documents = []string{"004"}
	if _, err := s.pick(cat); err == nil || !strings.Contains(err.Error(), "is not a claim of the catalog of --document 004") {
		t.Errorf("a claim of another document: %v", err)
	}
	s.claimIDs = nil
	if cs, err := s.pick(cat); err != nil || len(cs) < 2 {
		t.Errorf("--document 004 alone: %d claims, %v", len(cs), err)
	}
}
