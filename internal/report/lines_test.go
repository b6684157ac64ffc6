package report

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/internal/judge"
	"github.com/kubeproof/kubeproof/internal/report/realrun"
)

// A document of five lines: one quoted by a confirmed claim, one
// restating it, one restating a refuted claim, one restating claims whose
// verdicts differ, one not testable.
const flagSeed = `# Title

The API server stores the Pod.

It is stored, again.

The kubelet calls the CNI plugin itself.

The scheduler binds it and the kubelet calls CNI.

This post was fun to write.
`

const flagNotes = `lines:
- text: It is stored, again.
  restates: [D-STORED]
- text: The kubelet calls the CNI plugin itself.
  restates: [D-CNI]
- text: The scheduler binds it and the kubelet calls CNI.
  restates: [D-BIND, D-CNI]
- text: This post was fun to write.
  notTestable: the author's feelings
`

func flagReport(t *testing.T) Report {
	t.Helper()
	claim := func(id, quote string) claims.Claim {
		return claims.Claim{ID: id, Document: "d.txt", Section: "s", Quote: quote, Statement: id, Component: "c", Kind: claims.Behaviour}
	}
	cat := &claims.Catalog{Documents: []claims.Document{{File: "d.txt", Title: "D"}}, Claims: []claims.Claim{
		claim("D-STORED", "The API server stores the Pod."), claim("D-CNI", "elsewhere"), claim("D-BIND", "elsewhere too")}}
	results := []judge.Result{
		{Claim: cat.Claims[0], Verdict: judge.Confirmed, Reason: "stored"},
		{Claim: cat.Claims[1], Verdict: judge.Refuted, Reason: "containerd runs the plugin"},
		{Claim: cat.Claims[2], Verdict: judge.Confirmed, Reason: "bound"},
	}
	r := New(cat.Documents, results, judge.Run{}, nil)
	docs := fstest.MapFS{"d.txt": {Data: []byte(flagSeed)}}
	notes := fstest.MapFS{"d.yaml": {Data: []byte(flagNotes)}}
	if err := r.AddLines(cat, docs, notes); err != nil {
		t.Fatal(err)
	}
	return r
}

// A restating line that names a refuted claim, or claims whose verdicts
// differ, is flagged and shown as such (refuted, mixed), never as
// confirmed; the others take their claims' verdict.
func TestRestatingLinesAreFlagged(t *testing.T) {
	r := flagReport(t)
	lines := r.Documents[0].Lines
	want := []struct {
		first   int
		verdict string
		flagged bool
	}{{3, "confirmed", false}, {5, "confirmed", false}, {7, "refuted", true}, {9, Mixed, true}, {11, "not-testable", false}}
	if len(lines) != len(want) {
		t.Fatalf("lines: %+v", lines)
	}
	for i, w := range want {
		l := lines[i]
		if l.First != w.first || l.Verdict != w.verdict || (l.Flag != "") != w.flagged {
			t.Errorf("line %d: verdict %s, flag %q; want line %d %s, flagged %v", l.First, l.Verdict, l.Flag, w.first, w.verdict, w.flagged)
		}
	}
	if c := r.Documents[0].LineCounts; c.String() != "5 units and 0 lines inside blocks: 1 quoted by claims, 3 restating claimed ones, 1 not testable, 0 open." {
		t.Errorf("counts: %s", c)
	}
	var md, html bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	row := func(doc, line string) string {
		for _, l := range strings.Split(doc, "\n") {
			if strings.HasPrefix(l, "| "+line+" |") {
				return l
			}
		}
		return ""
	}
	for line, want := range map[string]string{"7": "⚑ **❌ refuted**", "9": "⚑ **🔀 mixed**", "5": "**✅ confirmed**: restates [D-STORED]"} {
		if got := row(md.String(), line); !strings.Contains(got, want) {
			t.Errorf("claims.md line %s: %q, want %q", line, got, want)
		}
	}
	if strings.Contains(row(md.String(), "7"), "confirmed") {
		t.Errorf("claims.md shows a line restating a refuted claim as confirmed: %s", row(md.String(), "7"))
	}
	if !strings.Contains(md.String(), "⚑ **2 line(s) restate a refuted claim") {
		t.Errorf("claims.md's summary does not count the flagged lines:\n%s", md.String())
	}
	if err := HTML(&html, r); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(html.String(), `<tr class="flag">`); n != 2 {
		t.Errorf("claims.html marks %d lines, want 2", n)
	}
}

// loadRealRun reads the claims.json of a real run kept as testdata.
func loadRealRun(t *testing.T) Report {
	t.Helper()
	var r Report
	realrun.Decode(t, &r)
	return r
}

// In a finished run's report (a real local run), every line of the five
// documents is there in order, counted as docs/sentences.md counts it, and
// every restating line that names a refuted claim or claims with different
// verdicts is flagged, not shown as confirmed.
func TestRealRunShowsEveryLine(t *testing.T) {
	r := loadRealRun(t)
	cat, err := claims.Load(fixtures.Claims())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.AddLines(cat, fixtures.Seeds(), fixtures.Sentences()); err != nil {
		t.Fatal(err)
	}
	sentences, err := os.ReadFile(filepath.Join("..", "..", "docs", "sentences.md"))
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	counted := regexp.MustCompile(`(?m)^## (\S+): .*\n\n(\d+ units and .*\.)$`).FindAllStringSubmatch(string(sentences), -1)
	if len(counted) != 5 || len(r.Documents) != 5 {
		t.Fatalf("docs/sentences.md counts %d documents, the run has %d", len(counted), len(r.Documents))
	}
	for _, c := range counted {
		file, counts := c[1], c[2]
		var d *DocumentResult
		for i := range r.Documents {
			if r.Documents[i].File == file {
				d = &r.Documents[i]
			}
		}
		if d == nil {
			t.Errorf("the run has no document %s", file)
			continue
		}
		if d.LineCounts.String() != counts {
			t.Errorf("%s: the report counts %q, docs/sentences.md %q", file, d.LineCounts, counts)
		}
		if !strings.Contains(md.String(), "### "+file+", line by line\n\n"+counts) {
			t.Errorf("claims.md does not count %s's lines as docs/sentences.md does (%s)", file, counts)
		}
		last := 0
		for _, l := range d.Lines {
			if l.First < last {
				t.Errorf("%s: line %d after line %d", file, l.First, last)
			}
			last = l.First
			var refuted bool
			verdicts := map[judge.Verdict]bool{}
			for _, c := range l.Restates {
				refuted = refuted || c.Verdict == judge.Refuted
				switch c.Verdict {
				case "", judge.NotRun, judge.NotCheckable, judge.Error, judge.Within, judge.Faster, judge.Slower:
				default:
					verdicts[c.Verdict] = true
				}
			}
			if (refuted || len(verdicts) > 1) && (l.Flag == "" || l.Verdict == string(judge.Confirmed)) {
				t.Errorf("%s line %d restates %+v but shows as %s, flag %q", file, l.First, l.Restates, l.Verdict, l.Flag)
			}
			if l.Flag != "" && !strings.Contains(md.String(), "| "+l.Numbers()+" | ") {
				t.Errorf("%s line %d is not in claims.md", file, l.First)
			}
		}
	}
}

// A claim the run did not run, could not check or erred on says nothing
// about a restating line yet: only decided verdicts that differ flag it.
func TestOnlyDecidedVerdictsDiffer(t *testing.T) {
	c := func(v judge.Verdict) LineClaim { return LineClaim{ID: string(v), Verdict: v} }
	for _, tc := range []struct {
		claims []LineClaim
		differ bool
	}{
		{[]LineClaim{c(judge.Confirmed), c(judge.NotCheckable)}, false},
		{[]LineClaim{c(judge.Confirmed), c(judge.NotRun), c(judge.Error)}, false},
		{[]LineClaim{c(judge.Confirmed), c(judge.Conditional)}, true},
		{[]LineClaim{c(judge.Confirmed), c(judge.NotTestable)}, true},
		{[]LineClaim{c(judge.Confirmed), c(judge.Within), c(judge.Slower)}, false},
	} {
		if got := decidedDiffer(tc.claims); got != tc.differ {
			t.Errorf("%+v: differ %v, want %v", tc.claims, got, tc.differ)
		}
	}
}
