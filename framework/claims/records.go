package claims

// LabelPrefix and SpecLabelPrefix are the Ginkgo label prefixes that tie
// specs to claims.
const (
	ClaimLabelPrefix = "claim:"
	SpecLabelPrefix  = "spec:"
	// EvidencePrefix names the report entries that carry evidence.
	EvidencePrefix = "evidence:"
	// UnobservablePrefix names the report entries that say why a spec
	// could not observe a piece of evidence on this cluster.
	UnobservablePrefix = "unobservable:"
	// ComponentEntry names the report entries that say what a component
	// was seen doing, or not doing within a window (ComponentNote).
	ComponentEntry = "kubeproof.component"
	// FailureDumpEntry names the report entry that points at a failed
	// spec's namespace dump.
	FailureDumpEntry = "kubeproof.failure-dump"
	// PreconditionPrefix starts the failure message of a spec that stopped
	// because something its claims depend on did not happen: the claims it
	// had not decided yet are not checkable, naming that precondition.
	PreconditionPrefix = "precondition not met: "
)

// ComponentNote is what a spec saw a cluster component do (Saw), or not
// do within its observation window.
type ComponentNote struct {
	Component string `json:"component"`
	Saw       bool   `json:"saw"`
	What      string `json:"what"`
}
