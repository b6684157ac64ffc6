package framework

import (
	"fmt"

	"github.com/onsi/ginkgo/v2"

	"github.com/kubeproof/kubeproof/claims/record"
)

// Saw notes, for the report's opening, that a cluster component was seen
// doing something ("kube-scheduler", "bound Pod web to a node").
func Saw(component, what string, args ...any) {
	note(component, true, what, args...)
}

// Missed notes that a component was expected to do something and was not
// seen doing it within its window.
func Missed(component, what string, args ...any) {
	note(component, false, what, args...)
}

func note(component string, saw bool, what string, args ...any) {
	if len(args) > 0 {
		what = fmt.Sprintf(what, args...)
	}
	writeRecord(record.Record{Kind: record.ComponentRecord, Component: &record.ComponentNote{Component: component, Saw: saw, What: what}},
		ginkgo.ReportEntryVisibilityNever)
}

// Unmet stops the spec because something its claims depend on did not
// happen: component did not do what within its window (detail says what
// was seen instead). The claims the spec had not decided yet are judged
// not checkable, naming the precondition; a claim about the component
// itself is refuted by the evidence the spec recorded before it stopped.
// The spec fails: a cluster that cannot do this is not healthy.
func Unmet(component, what, detail string) {
	ginkgo.GinkgoHelper()
	Missed(component, what)
	stop(component, what, detail)
}

// stop fails the spec on an unmet precondition without noting the
// component again (the canary already did, for Needs).
func stop(component, what, detail string) {
	ginkgo.GinkgoHelper()
	u := record.Unmet{Component: component, What: what, Detail: detail}
	writeRecord(record.Record{Kind: record.UnmetRecord, Unmet: &u, Attempt: ginkgo.CurrentSpecReport().NumAttempts}, ginkgo.ReportEntryVisibilityNever)
	ginkgo.Fail(u.Message())
}
