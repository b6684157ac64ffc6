package claims

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// testCatalog loads a catalog of testdata as the one document of a tree.
func testCatalog(t *testing.T, file string) *Catalog {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := Load(fstest.MapFS{"doc.yaml": {Data: data}})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func TestValidateRejects(t *testing.T) {
	bad := map[string]string{
		"no spec":                 "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, expect: [{evidence: e, equals: 1}]}]",
		"no expectation":          "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, specs: [x-y]}]",
		"two operators":           "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, specs: [x-y], expect: [{evidence: e, equals: 1, atLeast: 2}]}]",
		"bad kind":                "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: vibe, specs: [x-y], expect: [{evidence: e, equals: 1}]}]",
		"unknown field":           "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, specs: [x-y], expect: [{evidence: e, equals: 1}], verdict: confirmed}]",
		"untestable with spec":    "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, specs: [x-y], notTestable: why}]",
		"duplicate id":            "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, notTestable: why}, {id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, notTestable: why}]",
		"source written":          "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, notTestable: why, source: {file: f, line: 1}}]",
		"timing without a number": "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: timing, specs: [x-y], expect: [{evidence: e, atMost: 1}]}]",
		"timing without a range":  "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: timing, specs: [x-y], claimed: 1 s, expect: [{evidence: e, equals: 1}]}]",
		"open with spec":          "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, specs: [x-y], open: no spec yet}]",
		"open with expect":        "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, expect: [{evidence: e, equals: 1}], open: no spec yet}]",
		"open and not testable":   "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, notTestable: why, open: no spec yet}]",
		"withinClaimed, no claim": "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: timing, specs: [x-y], expect: [{evidence: e, withinClaimed: true}]}]",
		"withinClaimed, words":    "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: timing, specs: [x-y], claimed: 수 밀리초, expect: [{evidence: e, withinClaimed: true}]}]",
		"withinClaimed and range": "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: timing, specs: [x-y], claimed: 2s, expect: [{evidence: e, withinClaimed: true, atMost: 3}]}]",
		"anyMatches bad regexp":   "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, specs: [x-y], expect: [{evidence: e, anyMatches: '('}]}]",
		"anyMatches bad field":    "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, specs: [x-y], expect: [{evidence: e, anyMatches: {verb: '[a'}}]}]",
		"anyMatches a number":     "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, specs: [x-y], expect: [{evidence: e, anyMatches: 3}]}]",
	}
	for name, body := range bad {
		_, err := Load(fstest.MapFS{"x.yaml": {Data: []byte("document: {file: d.txt, title: t}\n" + body)}})
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Each claim knows the file and the line of its id, in block and in flow
// style, under the directory the catalog was loaded from.
func TestSourceLines(t *testing.T) {
	doc := `# a comment
document: {file: d.txt, title: t}
claims:
- id: A-ONE
  section: s
  quote: q
  statement: s
  component: c
  kind: behaviour
  notTestable: why

-   section: s
    quote: q
    id: A-TWO
    statement: s
    component: c
    kind: behaviour
    notTestable: why
- {id: A-THREE, section: s, quote: q, statement: s, component: c, kind: behaviour, notTestable: why}
`
	cat, err := LoadAt(fstest.MapFS{"d.yaml": {Data: []byte(doc)}}, "fixtures/claims")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"A-ONE": 4, "A-TWO": 14, "A-THREE": 19}
	for _, c := range cat.Claims {
		if c.Source == nil || c.Source.File != "fixtures/claims/d.yaml" || c.Source.Line != want[c.ID] {
			t.Errorf("%s: source %+v, want fixtures/claims/d.yaml:%d", c.ID, c.Source, want[c.ID])
		}
	}
}

// A file's header names this schema; a file without one loads with a hint
// naming it, and a wrong one is refused with an error naming the file.
func TestHeader(t *testing.T) {
	body := "document: {file: d.txt, title: t}\nclaims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, notTestable: why}]\n"
	for name, tc := range map[string]struct {
		header, err string
		hints       int
	}{
		"header":      {header: "apiVersion: kubeproof.io/v1alpha1\nkind: Claims\n"},
		"none":        {hints: 1},
		"old version": {header: "apiVersion: kubeproof.io/v0\nkind: Claims\n", err: `claims file fixtures/claims/x.yaml: apiVersion "kubeproof.io/v0", want kubeproof.io/v1alpha1`},
		"other kind":  {header: "apiVersion: kubeproof.io/v1alpha1\nkind: Claim\n", err: `claims file fixtures/claims/x.yaml: kind "Claim", want Claims`},
		"no kind":     {header: "apiVersion: kubeproof.io/v1alpha1\n", err: `claims file fixtures/claims/x.yaml: kind "", want Claims`},
	} {
		cat, err := LoadAt(fstest.MapFS{"x.yaml": {Data: []byte(tc.header + body)}}, "fixtures/claims")
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: error %v, want %s", name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(cat.Hints) != tc.hints {
			t.Errorf("%s: hints %q, want %d", name, cat.Hints, tc.hints)
		}
	}
}

// An open claim, withinClaimed and anyMatches load when well formed.
func TestValidateAccepts(t *testing.T) {
	good := map[string]string{
		"open":          "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, open: a spec that deletes a node}]",
		"withinClaimed": "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: timing, specs: [x-y], claimed: 약 2초, expect: [{evidence: e, withinClaimed: true}]}]",
		"anyMatches":    "claims: [{id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, specs: [x-y], expect: [{evidence: e, anyMatches: {verb: '^(create|patch)$', code: '^20'}}, {evidence: f, anyMatches: 'Ready'}]}]",
	}
	for name, body := range good {
		if _, err := Load(fstest.MapFS{"x.yaml": {Data: []byte("document: {file: d.txt, title: t}\n" + body)}}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A file whose YAML or field is wrong is reported at its line, with the
// claim it is in.
func TestDecodeErrorsNameLineAndClaim(t *testing.T) {
	head := "apiVersion: kubeproof.io/v1alpha1\nkind: Claims\ndocument: {file: d.txt, title: t}\nclaims:\n"
	entry := func(id, extra string) string {
		return "- id: " + id + "\n  section: s\n  quote: q\n  statement: s\n  component: c\n  kind: behaviour\n  specs: [x-y]\n  expect:\n  - {evidence: e, equals: 1}\n" + extra
	}
	for name, tc := range map[string]struct{ file, want string }{
		"unknown field":       {head + entry("A-ONE", "") + entry("A-TWO", "  verdict: confirmed\n"), `u.yaml:23: claim A-TWO: unknown field "verdict"`},
		"wrong type":          {head + entry("A-ONE", "  - evidence: f\n    atLeast: three\n"), "u.yaml:15: claim A-ONE: atLeast: a string where the field is of type float64"},
		"list for a string":   {head + entry("A-ONE", "  note: [a, b]\n"), "u.yaml:14: claim A-ONE: note: a list where the field is of type string"},
		"unknown top field":   {head + entry("A-ONE", "") + "extra: 1\n", `u.yaml:14: unknown field "extra"`},
		"unknown doc field":   {strings.Replace(head, "title: t", "title: t, tilte: u", 1) + entry("A-ONE", ""), `u.yaml:3: unknown field "tilte"`},
		"syntax":              {head + entry("A-ONE", "  note: [a\n"), "u.yaml:13: did not find expected"},
		"unknown field no id": {head + "- section: s\n  wat: 1\n", `u.yaml:6: claim at line 5 (no id): unknown field "wat"`},
	} {
		err := (&Catalog{}).add("u.yaml", "u.yaml", "", []byte(tc.file))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %s", name, err, tc.want)
		}
	}
}

// A user's claim whose ID is one of the built-in catalog's says so, and
// where that claim is.
func TestBuiltinIDClash(t *testing.T) {
	base := "document: {file: base.txt, title: t}\nclaims:\n- {id: A-B, section: s, quote: q, statement: s, component: c, kind: behaviour, notTestable: why}\n"
	cat, err := LoadAt(fstest.MapFS{"base.yaml": {Data: []byte(base)}}, "fixtures/claims")
	if err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(t.TempDir(), "own.yaml")
	if err := os.WriteFile(own, []byte(strings.Replace(base, "base.txt", "own.md", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	err = cat.AddFile(own)
	want := "claim A-B (own.md): the ID is already a claim of the built-in catalog (base.txt, fixtures/claims/base.yaml:3): choose another"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("AddFile: %v, want %s", err, want)
	}
}

// Quotes are found white space aside, condensed ones fragment by fragment.
func TestCheckQuote(t *testing.T) {
	text := "# Title\n\nThe scheduler   binds the Pod\nto a node.\n\nLater, the kubelet starts it.\n"
	for _, tc := range []struct {
		quote     string
		condensed bool
		want      string
	}{
		{"The scheduler binds the Pod to a node.", false, ""},
		{"The scheduler binds the Pod … the kubelet starts it.", true, ""},
		{"The scheduler binds the Pod to a node.", true, "marked condensed"},
		{"the sentence of the document, as written", false, "claim X: quote not found in d.md: «the sentence of the document, as written»"},
		{"The scheduler binds the Pod … the kubelet stops it.", true, "fragment «the kubelet stops it.»"},
		{"the kubelet starts it. … The scheduler", true, "fragment «The scheduler»"},
	} {
		err := CheckQuote(text, "d.md", Claim{ID: "X", Quote: tc.quote, Condensed: tc.condensed})
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%q: %v, want %q", tc.quote, err, tc.want)
		}
	}
}
