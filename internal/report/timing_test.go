package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/expect"
	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/judge"
)

// Timing claims are measurements: faster or slower than a document's
// number is not refuted documentation, so it fails neither
// --fail-on-refuted (the summary's refuted count) nor claims-junit.xml,
// and the report shows the document's environment beside the measurement.
func TestTimingIsNotRefuted(t *testing.T) {
	at := func(f float64) *float64 { return &f }
	timing := func(id string, v judge.Verdict, value float64) judge.Result {
		c := claims.Claim{ID: id, Document: "d.txt", Section: "s", Quote: "q", Statement: id, Component: "c", Kind: claims.Timing, Claimed: "10-50 ms",
			Expect: []expect.Expectation{{Evidence: "t.ms.median", AtLeast: at(10), AtMost: at(50)}}}
		return judge.Result{Claim: c, Verdict: v, Reason: "measured",
			Measurement: &judge.Measurement{Evidence: "t.ms.median", Claimed: "10-50 ms", Low: at(10), High: at(50), Value: value, Min: at(value / 2), Max: at(value * 2), N: 5}}
	}
	results := []judge.Result{timing("T-FAST", judge.Faster, 6.4), timing("T-SLOW", judge.Slower, 199), timing("T-IN", judge.Within, 20)}
	r := New([]claims.Document{{File: "d.txt", Title: "D", Environment: "k3s v1.28, a local 3-node cluster"}}, results, judge.Run{},
		&cluster.Info{Provider: "local", Name: "kp", KubernetesVersion: "v1.37.2", Nodes: []string{"n"}})
	if r.Summary[string(judge.Refuted)] != 0 || r.Summary["faster"] != 1 || r.Summary["slower"] != 1 || r.Summary["within"] != 1 {
		t.Errorf("summary: %v", r.Summary)
	}
	var buf bytes.Buffer
	if err := JUnit(&buf, r, true); err != nil {
		t.Fatal(err)
	}
	var got junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Failures != 0 || got.Errors != 0 || got.Tests != 3 {
		t.Errorf("claims-junit.xml with --fail-on-refuted: %d tests, %d failures, %d errors\n%s", got.Tests, got.Failures, got.Errors, buf.String())
	}
	var md bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| [`T-FAST`](#claim-t-fast) | 10-50 ms, on k3s v1.28, a local 3-node cluster | median 6.4 ms of 5, spread 3.2-12.8 ms (t.ms.median) on local cluster \"kp\", Kubernetes v1.37.2, 1 node(s) | ⏱️ faster than the document |",
		"⏱️ slower than the document",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("claims.md lacks %q:\n%s", want, md.String())
		}
	}
	other := New([]claims.Document{{File: "d.txt", Title: "D"}}, []judge.Result{timing("T-FAST", judge.Within, 20), timing("T-SLOW", judge.Within, 20), timing("T-IN", judge.Slower, 90)}, judge.Run{}, nil)
	if d := Diff([]Report{r, other}, DiffOptions{}); len(d) != 0 {
		t.Errorf("report diff without --timing lists timing claims: %+v", d)
	}
	if d := Diff([]Report{r, other}, DiffOptions{Timing: true}); len(d) != 3 {
		t.Errorf("report diff --timing: %+v", d)
	}
}
