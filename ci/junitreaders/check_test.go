package main

import (
	"strings"
	"testing"
)

// The counts a reader shows come from the cases; a file whose stated counts
// (attributes, or what the library parsed from them) differ is caught.
func TestCountedAndStated(t *testing.T) {
	two := 2
	doc := Doc{Top: map[string]string{"tests": "3", "failures": "1", "errors": "0", "skipped": "1"}, Suites: []Suite{{
		Attributes: map[string]string{"name": "s", "tests": "3", "failures": "1", "errors": "0", "skipped": "1"},
		Parsed:     map[string]*int{"tests": &two},
		Cases:      []Case{{Result: "passed"}, {Result: "failure"}, {Result: "skipped"}},
	}}}
	got := doc.Counted()
	if got != (Counts{Tests: 3, Failures: 1, Skipped: 1}) {
		t.Fatalf("counted %s", got)
	}
	problems := doc.Stated(got)
	if len(problems) != 1 || !strings.Contains(problems[0], "parsed tests = 2") {
		t.Errorf("problems %q, want the parsed tests only", problems)
	}
	doc.Top["skipped"] = "0"
	delete(doc.Suites[0].Attributes, "errors")
	if problems := doc.Stated(got); len(problems) != 3 {
		t.Errorf("problems %q, want 3", problems)
	}
}

// What claims.json says each file must count: verdicts for
// claims-junit.xml (refuted ones failures only when asked), the specs that
// ran and one test per suite node type for junit.xml.
func TestExpectedCounts(t *testing.T) {
	r := &report{Summary: map[string]int{"confirmed": 5, "refuted": 2, "conditional": 1, "not-checkable": 1, "not-testable": 2, "not-run": 1, "error": 1}}
	if got := r.claimCounts(true); got != (Counts{Tests: 13, Failures: 2, Errors: 1, Skipped: 4}) {
		t.Errorf("refuted as failures: %s", got)
	}
	if got := r.claimCounts(false); got != (Counts{Tests: 13, Errors: 1, Skipped: 4}) {
		t.Errorf("refuted as passed: %s", got)
	}
	r.Specs = []specState{{ID: "a", State: "passed"}, {ID: "b", State: "aborted"}, {ID: "c", State: "interrupted"}, {ID: "d", State: "skipped"}}
	r.suiteNodes = map[string]string{"SynchronizedBeforeSuite": "failed", "SynchronizedAfterSuite": "passed"}
	if got := r.specCounts(); got != (Counts{Tests: 6, Failures: 2, Errors: 1, Skipped: 1}) {
		t.Errorf("specs: %s", got)
	}
}
