package report

import (
	"bytes"
	"encoding/xml"
	"testing"

	"github.com/kubeproof/kubeproof/framework/claims"
)

// One test case per claim: refuted fails only when asked, what could not be
// decided is skipped with its reason, an error is an error; the counts of
// the suites add up.
func TestJUnitOneCasePerClaim(t *testing.T) {
	res := func(id string, v claims.Verdict) claims.Result {
		return claims.Result{Claim: claims.Claim{ID: id, Statement: "s " + id}, Verdict: v, Reason: "because " + id}
	}
	r := Report{Documents: []DocumentResult{{File: "doc.txt", Title: "Doc", Claims: []claims.Result{
		res("A", claims.Confirmed), res("B", claims.Refuted), res("C", claims.NotCheckable),
		res("D", claims.Error), res("E", claims.NotTestable), res("F", claims.Conditional),
	}}}}
	for _, refutedFails := range []bool{false, true} {
		var buf bytes.Buffer
		if err := JUnit(&buf, r, refutedFails); err != nil {
			t.Fatal(err)
		}
		var got junitSuites
		if err := xml.Unmarshal(buf.Bytes(), &got); err != nil {
			t.Fatalf("not XML: %v\n%s", err, buf.String())
		}
		wantFailures := 0
		if refutedFails {
			wantFailures = 1
		}
		if got.Tests != 6 || got.Failures != wantFailures || got.Errors != 1 || got.Skipped != 2 || len(got.Suites) != 1 || len(got.Suites[0].Cases) != 6 {
			t.Fatalf("refutedFails=%t: tests %d failures %d errors %d skipped %d\n%s", refutedFails, got.Tests, got.Failures, got.Errors, got.Skipped, buf.String())
		}
		c := got.Suites[0].Cases
		if c[0].Name != "A: s A" || c[0].Classname != "doc.txt" || c[0].Failure != nil || c[0].Skipped != nil {
			t.Errorf("confirmed case %+v", c[0])
		}
		if (c[1].Failure != nil) != refutedFails || c[1].SystemOut != "refuted: because B" {
			t.Errorf("refuted case %+v", c[1])
		}
		if c[2].Skipped == nil || c[2].Skipped.Message != "not-checkable: because C" || c[3].Error == nil {
			t.Errorf("not checkable %+v, error %+v", c[2], c[3])
		}
	}
}
