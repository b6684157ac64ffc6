// Package record is the wire between a spec and the judge: what a spec
// tells about its run (evidence, evidence it could not observe, a
// component it saw fail, a precondition that did not happen, a namespace
// dump), one Record per Ginkgo report entry named RecordEntry.
package record

import (
	"encoding/json"
	"fmt"
)

// RecordEntry names the Ginkgo report entries through which a spec tells
// the judge what it observed. Each entry's value is one Record, so that the
// judge decodes what kind of thing it is reading from the record itself,
// not from a prefix of the entry's name or of a failure message.
const RecordEntry = "kubeproof.record"

// RecordKind says what a Record holds.
type RecordKind string

const (
	// EvidenceRecord: a value the spec observed (Name, Value).
	EvidenceRecord RecordKind = "evidence"
	// UnobservableRecord: why the spec could not observe the evidence Name
	// on this cluster (Reason).
	UnobservableRecord RecordKind = "unobservable"
	// ComponentRecord: what a component was seen doing, or not doing
	// within a window (Component).
	ComponentRecord RecordKind = "component"
	// UnmetRecord: the spec stopped because something its claims depend on
	// did not happen (Unmet); the claims it had not decided yet are not
	// checkable, naming it.
	UnmetRecord RecordKind = "unmet"
	// DumpRecord: the file a failed spec's namespace was dumped to (Dump).
	DumpRecord RecordKind = "dump"
)

// Record is one thing a spec reports to the judge.
type Record struct {
	Kind RecordKind `json:"kind"`
	// Name is the evidence's name (evidence, unobservable).
	Name string `json:"name,omitempty"`
	// Value is the evidence as the spec recorded it; decoded from a report
	// it is the value's JSON, decoded into any.
	Value any `json:"value,omitempty"`
	// Reason says why the evidence is unobservable here.
	Reason    string         `json:"reason,omitempty"`
	Component *ComponentNote `json:"component,omitempty"`
	Unmet     *Unmet         `json:"unmet,omitempty"`
	Dump      string         `json:"dump,omitempty"`
	// Attempt is the spec's attempt (1, or more with --flake-attempts)
	// the record was made in: an unmet precondition stopped the spec only
	// if it was recorded in the attempt its result is of.
	Attempt int `json:"attempt,omitempty"`
}

// String is what Ginkgo prints for the entry in a verbose run or beside a
// failure: the record in a line, not its Go syntax.
func (r Record) String() string {
	switch r.Kind {
	case EvidenceRecord:
		v, err := json.Marshal(r.Value)
		if err != nil {
			return fmt.Sprintf("evidence %s: %v", r.Name, r.Value)
		}
		return fmt.Sprintf("evidence %s: %s", r.Name, v)
	case UnobservableRecord:
		return fmt.Sprintf("unobservable %s: %s", r.Name, r.Reason)
	case ComponentRecord:
		if r.Component != nil {
			return fmt.Sprintf("component %s: saw %t: %s", r.Component.Component, r.Component.Saw, r.Component.What)
		}
	case UnmetRecord:
		if r.Unmet != nil {
			return r.Unmet.Message()
		}
	case DumpRecord:
		return "namespace dump: " + r.Dump
	}
	return string(r.Kind)
}

// ComponentNote is what a spec saw a cluster component do (Saw), or not
// do within its observation window.
type ComponentNote struct {
	Component string `json:"component"`
	Saw       bool   `json:"saw"`
	What      string `json:"what"`
}

// Unmet is a precondition a spec stopped on: Component did not do What
// within its window; Detail says what was seen instead.
type Unmet struct {
	Component string `json:"component"`
	What      string `json:"what"`
	Detail    string `json:"detail"`
}

// Message is the spec's failure message when it stops on u.
func (u Unmet) Message() string {
	return fmt.Sprintf("precondition not met: %s", u.Missing())
}

// Missing says what did not happen, for a not-checkable verdict's reason.
func (u Unmet) Missing() string {
	return fmt.Sprintf("%s did not happen (%s): %s", u.What, u.Component, u.Detail)
}
