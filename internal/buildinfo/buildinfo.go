// Package buildinfo says which kubeproof is running: its version and the
// commit it was built from, as the reports record them (a report
// directory says which kubeproof made it). The kubeproof command sets them
// once at start from its link-time stamps (the Makefile's and a release's
// -X main.buildVersion and main.buildCommit) or Go's build information.
package buildinfo

import (
	"runtime/debug"
	"sync"
)

// Build is a kubeproof's version and commit, as claims.json and the other
// JSON outputs carry it.
type Build struct {
	// Version is the release (v0.1.0), a `git describe` of the checkout it
	// was built from, or "dev".
	Version string `json:"version"`
	// Commit is the full hash of the commit it was built from; "" when
	// unknown (a build without the stamp or Go's VCS information).
	Commit string `json:"commit"`
}

var (
	mu      sync.Mutex
	current = Build{Version: "dev"}
)

// Set records the running kubeproof's version and commit; an empty commit
// is taken from Go's build information when it has one.
func Set(version, commit string) {
	if version == "" {
		version = "dev"
	}
	if commit == "" {
		commit = vcsRevision()
	}
	mu.Lock()
	defer mu.Unlock()
	current = Build{Version: version, Commit: commit}
}

// Current is the running kubeproof's version and commit ("dev" and the
// build's VCS revision, if any, when Set was not called: in tests).
func Current() Build {
	mu.Lock()
	defer mu.Unlock()
	if current.Commit == "" {
		current.Commit = vcsRevision()
	}
	return current
}

// vcsRevision is the commit Go stamped into the binary (go build in a
// checkout without -buildvcs=false), or "".
func vcsRevision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			return s.Value
		}
	}
	return ""
}
