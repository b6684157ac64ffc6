package judge

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/evidence"
	"github.com/kubeproof/kubeproof/claims/record"
)

// A watch's evidence as a spec records it when the first line parsed: the
// optional firstLineError is left out (omitempty).
const watchRun = `{"watchHTTP":{"chunks":3,"firstLine":{"type":"ADDED"}}}`

func watchClaim(expect string) string {
	return `{id: X-WATCH, section: s, quote: q, statement: st, component: c, kind: behaviour, specs: [p],
  expect: [` + expect + `]}`
}

// A field missing below evidence a spec that ended recorded is absent,
// null: absent: true holds, a comparison refutes naming the field. Never
// a harness bug.
func TestMissingFieldOfRecordedEvidence(t *testing.T) {
	ended := probeResult(t, "passed", watchRun)
	cases := []struct {
		name, expect string
		want         Verdict
		reason       string
	}{
		{"absent: true", `{evidence: watchHTTP.firstLineError, absent: true}`, Confirmed, "watchHTTP.firstLineError is absent"},
		{"absent: false", `{evidence: watchHTTP.firstLineError, absent: false}`, Refuted,
			"watchHTTP.firstLineError is absent (watchHTTP has no firstLineError)"},
		{"equals", `{evidence: watchHTTP.firstLineError, equals: "no such error"}`, Refuted,
			`watchHTTP.firstLineError is absent (watchHTTP has no firstLineError) where the document says = "no such error"`},
		{"equals null", `{evidence: watchHTTP.firstLineError, equals: null}`, Confirmed, ""},
		{"a field of a missing object", `{evidence: watchHTTP.firstLine.object.kind, equals: Pod}`, Refuted,
			"watchHTTP.firstLine.object.kind is absent (watchHTTP.firstLine has no object)"},
		{"a range", `{evidence: watchHTTP.firstLineAt, atMost: 1000}`, Refuted,
			"watchHTTP.firstLineAt is absent (watchHTTP has no firstLineAt)"},
		{"minus", `{evidence: watchHTTP.chunks, minus: watchHTTP.firstLineAt, atMost: 1000}`, Refuted,
			"watchHTTP has no firstLineAt"},
		{"compared with evidence", `{evidence: watchHTTP.chunks, sameAs: watchHTTP.firstLineAt}`, Refuted,
			"watchHTTP.firstLineAt is absent (watchHTTP has no firstLineAt)"},
		{"a list element past the end, as before", `{evidence: watchHTTP.lines.0, equals: x}`, Refuted,
			"watchHTTP has no lines"},
	}
	for _, tc := range cases {
		r := judged(t, watchClaim(tc.expect), ended)
		if r.Verdict != tc.want || !strings.Contains(r.Reason, tc.reason) {
			t.Errorf("%s: %s (%s), want %s with %q", tc.name, r.Verdict, r.Reason, tc.want, tc.reason)
		}
	}
}

// Evidence a spec did not get to is no absence: a spec that stopped on a
// precondition makes the claim not checkable, one that failed otherwise
// and evidence no spec recorded at all stay harness errors.
func TestMissingFieldOfUnfinishedSpec(t *testing.T) {
	claim := watchClaim(`{evidence: watchHTTP.firstLineError, absent: true}`)
	failed := probeResult(t, "failed", watchRun)
	if r := judged(t, claim, failed); r.Verdict != Error || !strings.Contains(r.Reason, "spec p failed before it observed watchHTTP.firstLineError: stopped") {
		t.Errorf("failed: %s (%s)", r.Verdict, r.Reason)
	}
	stopped := probeResult(t, "failed", watchRun)
	stopped.Unmet = &record.Unmet{Component: "probe p", What: "step watch", Detail: "timed out"}
	if r := judged(t, claim, stopped); r.Verdict != NotCheckable || !strings.Contains(r.Reason, "step watch did not happen") {
		t.Errorf("stopped: %s (%s)", r.Verdict, r.Reason)
	}
	ended := probeResult(t, "passed", watchRun)
	r := judged(t, watchClaim(`{evidence: watchGRPC.firstLineError, absent: true}`), ended)
	if r.Verdict != Error || !strings.Contains(r.Reason, "no spec recorded the evidence watchGRPC.firstLineError (a harness bug)") {
		t.Errorf("evidence not recorded at all: %s (%s)", r.Verdict, r.Reason)
	}
}

// With the evidence's declared type, a field the spec may leave out
// (omitempty) is absent, and one it always writes is missing: a report of
// a kubeproof whose spec did not have the field yet, not a refutation.
func TestMissingFieldByDeclaredType(t *testing.T) {
	type watch struct {
		Chunks         int    `json:"chunks"`
		FirstLineError string `json:"firstLineError,omitempty"`
		PullTried      bool   `json:"pullTried"`
	}
	ended := probeResult(t, "passed", watchRun)
	specs := map[string]SpecResult{"p": ended}
	Declare(specs, []evidence.EvidenceDecl{{Spec: "p", Name: "watchHTTP", Type: reflect.TypeFor[watch]()}, {Spec: "other", Name: "x"}})
	judgeTyped := func(expect string) Result {
		return Claims([]claims.Claim{claimOf(t, watchClaim(expect))}, specs, info())[0]
	}
	if r := judgeTyped(`{evidence: watchHTTP.firstLineError, absent: true}`); r.Verdict != Confirmed {
		t.Errorf("an omitempty field: %s (%s)", r.Verdict, r.Reason)
	}
	r := judgeTyped(`{evidence: watchHTTP.pullTried, equals: true}`)
	if r.Verdict != Error || !strings.Contains(r.Reason, "spec p recorded watchHTTP without watchHTTP.pullTried, a field it always writes") {
		t.Errorf("a field always written: %s (%s)", r.Verdict, r.Reason)
	}
}
