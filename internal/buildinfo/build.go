package buildinfo

// Build is a kubeproof's version and commit, as the reports record them
// (claims.json: the kubeproof that wrote it, and the one that ran the
// specs).
type Build struct {
	// Version is the release (v0.1.0), a `git describe` of the checkout it
	// was built from, the module version `go install` recorded, or "dev".
	Version string `json:"version"`
	// Commit is the commit it was built from ("-dirty" when the tree had
	// changes); "" when nothing recorded it.
	Commit string `json:"commit"`
}

// Current is the running kubeproof's version and commit.
func Current() Build { return Build{Version: Version(), Commit: Commit()} }
