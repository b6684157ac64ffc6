//go:build e2e

package suites

import (
	"flag"
	"testing"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/internal/provision"
)

func init() {
	framework.RegisterFlags(flag.CommandLine)
	// So that specs can open the cluster's provider (to start an extra
	// API server, say).
	provision.RegisterOpeners()
}

// TestSuites runs every spec against the cluster given by the framework's
// flags, e.g.
//
//	go test -tags e2e ./suites -args --kubeproof.cluster-info=/var/lib/kubeproof/kubeproof/cluster.json
func TestSuites(t *testing.T) {
	framework.RunSuite(t, "kubeproof")
}
