package coverage

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kubeproof/kubeproof/claims"
)

const doc = `---
title: front matter is no sentence
---
# A heading

The scheduler binds the Pod.
- The kubelet starts it.

| a | b |
|---|---|
` + "```" + `
kubectl apply
  -> API server
` + "```" + `
<details>
An open question.
Opinion, not testable.
`

// A document's units: prose lines one by one, a fenced block whole;
// front matter, headings, table separators and folding markup are none.
func TestUnits(t *testing.T) {
	var got []string
	for _, u := range Units(doc) {
		got = append(got, u.Text())
	}
	want := []string{"The scheduler binds the Pod.", "- The kubelet starts it.", "| a | b |", "kubectl apply -> API server", "An open question.", "Opinion, not testable."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("units %q, want %q", got, want)
	}
	block := Units(doc)[3]
	if !block.Block || block.First != 11 || block.Last != 14 || len(block.Numbers) != 2 || block.Numbers[1] != 13 {
		t.Errorf("block %+v", block)
	}
}

// Every unit is decided by the claims that quote it or by its note; what
// neither decides, or a note that matches nothing, restates no claim or
// decides two ways, is a problem; the counts add up.
func TestDecide(t *testing.T) {
	cat := &claims.Catalog{Claims: []claims.Claim{
		{ID: "D-BIND", Document: "d.txt", Quote: "The scheduler binds the Pod."},
		{ID: "D-START", Document: "d.txt", Quote: "The kubelet starts it. … kubectl apply -> API server"},
		{ID: "OTHER", Document: "other.txt", Quote: "| a | b |"},
	}}
	notes := `lines:
- {text: "| a | b |", restates: [D-BIND]}
- {text: "An open question.", open: needs a spec of its own}
- {text: "-> API server", inBlock: true, notTestable: a diagram's arrow}
- {text: "no such line", notTestable: x}
- {text: "Opinion, not testable.", restates: [D-GONE], notTestable: twice}
`
	text, ok, err := LoadDocumentText(fstest.MapFS{"d.txt": {Data: []byte(doc)}}, fstest.MapFS{"d.yaml": {Data: []byte(notes)}}, "d.txt")
	if err != nil || !ok {
		t.Fatalf("load: %v %v", ok, err)
	}
	units, problems := Decide(text, cat)
	decisions := []Decision{}
	for _, u := range units {
		decisions = append(decisions, u.Decision())
	}
	want := []Decision{Quoted, Quoted, Restates, Quoted, Open, Restates}
	if len(decisions) != len(want) {
		t.Fatalf("decisions %v", decisions)
	}
	for i := range want {
		if decisions[i] != want[i] {
			t.Errorf("unit %d (%q): %s, want %s", i, units[i].Text(), decisions[i], want[i])
		}
	}
	if len(units[3].Inner) != 1 || units[3].Inner[0].Line != 13 {
		t.Errorf("the block's inner notes %+v", units[3].Inner)
	}
	all := strings.Join(problems, "\n")
	for _, p := range []string{`note "no such line" matches no line`, `give exactly one of restates, notTestable, open`, `restates D-GONE, which is no claim`} {
		if !strings.Contains(all, p) {
			t.Errorf("problems lack %q:\n%s", p, all)
		}
	}
	c := CountLines(units)
	if c.String() != "6 units and 1 lines inside blocks: 3 quoted by claims, 2 restating claimed ones, 1 not testable, 1 open." {
		t.Errorf("counts %s", c)
	}
	if _, ok, _ := LoadDocumentText(fstest.MapFS{}, fstest.MapFS{}, "gone.txt"); ok {
		t.Error("a document that is not there loaded")
	}
}

// A line neither quoted nor noted is undecided, and said so.
func TestUndecided(t *testing.T) {
	units, problems := Decide(DocumentText{File: "d.txt", Text: "Nobody quotes this.\n"}, &claims.Catalog{})
	if len(units) != 1 || units[0].Decision() != Undecided || len(problems) != 1 || !strings.Contains(problems[0], "neither quoted by a claim nor noted") {
		t.Errorf("units %+v, problems %v", units, problems)
	}
	if got := CountLines(units).String(); !strings.HasSuffix(got, ", 1 undecided.") {
		t.Errorf("counts %s", got)
	}
	if _, err := ParseLineNotes("n.yaml", []byte("lines: [{txt: x}]")); err == nil {
		t.Error("an unknown field in a notes file is refused")
	}
}
