// Package suites gathers every suite, so that one binary (kubeproof, or a
// `go test` binary of this package) carries all specs. Each suite is a package
// that declares Ginkgo specs at init; importing it registers them.
package suites

import (
	// Seed 000: the Pod creation flow.
	_ "github.com/kubeproof/kubeproof/suites/podflow"
)
