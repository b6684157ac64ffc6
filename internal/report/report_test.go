package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/expect"
	"github.com/kubeproof/kubeproof/claims/record"
	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/judge"
)

func sample() Report {
	at := func(f float64) *float64 { return &f }
	timing := claims.Claim{ID: "X-TIME", Document: "d.txt", Section: "s", Quote: "| 3 | Scheduler | 100-500ms |",
		Statement: "fast", Component: "kube-scheduler", Kind: claims.Timing, Claimed: "100-500 ms",
		Expect: []expect.Expectation{{Evidence: "t.ms", AtLeast: at(100), AtMost: at(500)}}}
	results := []judge.Result{
		{Claim: timing, Verdict: judge.Faster, Reason: "measured t.ms = 3.6, faster than the document's 100-500 ms (taken as 100-500)",
			Observations: []judge.Observation{{Evidence: "t.ms", Want: "between 100 and 500", Observed: 3.6, Found: true}},
			Measurement:  &judge.Measurement{Evidence: "t.ms", Claimed: "100-500 ms", Low: at(100), High: at(500), Value: 3.6}},
		{Claim: claims.Claim{ID: "X-OPINION", Document: "d.txt", Section: "s", Quote: "q", Statement: "st", Component: "none", Kind: claims.Behaviour, NotTestable: "opinion"},
			Verdict: judge.NotTestable, Reason: "opinion"},
		{Claim: claims.Claim{ID: "X-EVICT", Document: "d.txt", Section: "s", Quote: "q", Statement: "evicts", Component: "kube-controller-manager", Kind: claims.Behaviour, Open: "a spec that deletes a node"},
			Verdict: judge.Open, Reason: "a spec that deletes a node"},
		{Claim: claims.Claim{ID: "X-BIND", Document: "d.txt", Section: "s", Quote: "q", Statement: "binds", Component: "kube-scheduler", Kind: claims.Behaviour,
			FlipsUnder: []claims.Flip{{Fault: "cache-off", Verdict: claims.FlipsToConfirmed, Setting: "kube-apiserver --watch-cache=false"}}},
			Verdict: judge.Refuted, Reason: "the cluster did otherwise: bound = false"},
	}
	run := judge.Run{
		Specs: map[string]judge.SpecResult{"s-1": {ID: "s-1", State: "passed", Evidence: map[string]any{"t": map[string]any{"ms": 3.6}},
			Components: []record.ComponentNote{{Component: "kube-scheduler", Saw: true, What: "bound a Pod"}, {Component: "kube-scheduler", Saw: true, What: "bound a Pod"}}}},
		Suite: []record.ComponentNote{{Component: "kube-proxy", Saw: false, What: "Service traffic reached a Pod"}},
	}
	return New([]claims.Document{{File: "d.txt", Title: "Doc"}}, results, run, &cluster.Info{Provider: "local", Name: "kp", KubernetesVersion: "v1.36.3", Nodes: []string{"n"}})
}

func TestWriteAllFormats(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, sample()); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "claims.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.SchemaVersion != SchemaVersion || back.Summary["refuted"] != 1 || back.Summary["faster"] != 1 || back.Summary["not-testable"] != 1 || back.Summary["open"] != 1 || len(back.Specs) != 1 {
		t.Fatalf("claims.json: %+v", back)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "claims.md"))
	// A pipe in a quote must not break the table.
	if !strings.Contains(string(md), `\| 3 \| Scheduler \| 100-500ms \|`) {
		t.Errorf("claims.md does not escape table pipes:\n%s", md)
	}
	if !strings.Contains(string(md), "document: 100-500 ms") {
		t.Errorf("claims.md lacks the document's number beside the measurement:\n%s", md)
	}
	// An open claim is reported as open, never as not testable.
	if !strings.Contains(string(md), "| ❔ open | 1 |") || !strings.Contains(string(md), "a spec that deletes a node") {
		t.Errorf("claims.md does not report the open claim as open:\n%s", md)
	}
	// A setting that flips a verdict is shown beside it.
	flip := "would be confirmed with kube-apiserver --watch-cache=false (kubeproof faults --fault cache-off)"
	if !strings.Contains(string(md), flip) {
		t.Errorf("claims.md does not say under which setting X-BIND flips:\n%s", md)
	}
	html, _ := os.ReadFile(filepath.Join(dir, "claims.html"))
	for _, want := range []string{"<svg", "X-TIME", "measured: 3.6 ms", "X-EVICT", ">open<", flip} {
		if !strings.Contains(string(html), want) {
			t.Errorf("claims.html lacks %q", want)
		}
	}
	if strings.Contains(string(html), "http://") || strings.Contains(string(html), "https://") {
		t.Error("claims.html refers to an external asset")
	}
}

func TestTerminalListsOnlyWhatNeedsReading(t *testing.T) {
	var b bytes.Buffer
	Terminal(&b, sample())
	out := b.String()
	if !strings.Contains(out, "X-TIME") || strings.Contains(out, "X-OPINION") {
		t.Fatalf("terminal summary:\n%s", out)
	}
}

// The report opens with what each component was seen doing, the broken
// ones first, with the refuted claims about them.
func TestComponentsFirstTheBrokenOnes(t *testing.T) {
	r := sample()
	if len(r.Components) != 2 {
		t.Fatalf("components: %+v", r.Components)
	}
	proxy, sched := r.Components[0], r.Components[1]
	if proxy.Name != "kube-proxy" || !proxy.Broken() || proxy.NotSeen[0] != "Service traffic reached a Pod" {
		t.Errorf("first component: %+v", proxy)
	}
	if sched.Name != "kube-scheduler" || sched.Broken() || sched.Seen[0] != "bound a Pod (×2)" || len(sched.Refuted) != 1 || sched.Refuted[0] != "X-BIND" {
		t.Errorf("second component: %+v", sched)
	}
	var md bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| **kube-proxy** ❗ |") {
		t.Errorf("claims.md does not mark the broken component:\n%s", md.String())
	}
}

func TestDiffLeavesTimingOut(t *testing.T) {
	a, b := sample(), sample()
	b.Documents[0].Claims[0].Verdict = judge.Within // the timing claim
	if d := Diff([]Report{a, b}, DiffOptions{}); len(d) != 0 {
		t.Errorf("a timing claim's change counted: %+v", d)
	}
	if d := Diff([]Report{a, b}, DiffOptions{Timing: true}); len(d) != 1 || d[0].Claim != "X-TIME" || d[0].Verdicts[1] != "within" {
		t.Errorf("with --timing: %+v", d)
	}
	b.Documents[0].Claims[1].Verdict = judge.Error
	var out bytes.Buffer
	WriteDiff(&out, []string{"r1", "r2"}, Diff([]Report{a, b}, DiffOptions{}))
	if !strings.Contains(out.String(), "| X-OPINION | behaviour | not-testable | error |") {
		t.Errorf("diff table:\n%s", out.String())
	}
}

// The job summary stays far below GitHub's 1 MiB whatever the run: a run
// of 20,000 refuted and 20,000 errored claims with 10 kB reasons, and it
// still names the verdicts, the first claims of each kind and the link.
func TestSummaryIsBounded(t *testing.T) {
	long := strings.Repeat("what the cluster did instead | ", 350)
	var results []judge.Result
	for i := range 4000 {
		v := judge.Refuted
		if i%2 == 1 {
			v = judge.Error
		}
		results = append(results, judge.Result{Claim: claims.Claim{ID: fmt.Sprintf("BIG-%05d", i), Document: "big.md"}, Verdict: v, Reason: long})
	}
	r := New([]claims.Document{{File: "big.md", Title: "Big"}}, results, judge.Run{}, nil)
	var b bytes.Buffer
	if err := Summary(&b, r, "https://example.invalid/artifact", ""); err != nil {
		t.Fatal(err)
	}
	if b.Len() > MaxSummaryBytes || b.Len() > 1<<20 {
		t.Fatalf("summary of %d bytes", b.Len())
	}
	out := b.String()
	for _, want := range []string{"| refuted | 2000 |", "| error | 2000 |", "| BIG-00000 |", "| BIG-00001 |", "… and 1950 more", "(https://example.invalid/artifact)"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	t.Logf("summary of 4,000 failing claims: %d bytes", b.Len())
}

// A run that did not run a claim's specs differs from one that did only
// when asked to compare all runs; with IgnoreNotRun, a real change among
// the runs that ran it still counts.
func TestDiffIgnoresNotRunWhenAsked(t *testing.T) {
	a, b, c := sample(), sample(), sample()
	b.Documents[0].Claims[1].Verdict = judge.NotRun
	if d := Diff([]Report{a, b}, DiffOptions{}); len(d) != 1 || d[0].Verdicts[1] != "not-run" {
		t.Errorf("not-run against a verdict: %+v", d)
	}
	if d := Diff([]Report{a, b}, DiffOptions{IgnoreNotRun: true}); len(d) != 0 {
		t.Errorf("not-run counted with IgnoreNotRun: %+v", d)
	}
	c.Documents[0].Claims[1].Verdict = judge.Error
	if d := Diff([]Report{a, b, c}, DiffOptions{IgnoreNotRun: true}); len(d) != 1 || d[0].Verdicts[2] != "error" {
		t.Errorf("a change among the runs that ran it, with IgnoreNotRun: %+v", d)
	}
}
