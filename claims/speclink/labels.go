package speclink

// ClaimLabelPrefix and SpecLabelPrefix are the Ginkgo label prefixes that
// tie specs to claims; RequiresLabelPrefix and UsesLabelPrefix those of the
// capabilities a spec declares it requires and uses.
const (
	ClaimLabelPrefix    = "claim:"
	SpecLabelPrefix     = "spec:"
	RequiresLabelPrefix = "requires:"
	UsesLabelPrefix     = "uses:"
)
