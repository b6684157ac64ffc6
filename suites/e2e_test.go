//go:build e2e

package suites

import (
	"flag"
	"testing"

	"github.com/kubeproof/kubeproof/framework"
	// The providers, so that specs can open the cluster's (to start an
	// extra API server, say).
	_ "github.com/kubeproof/kubeproof/internal/provision/providers"
)

func init() { framework.RegisterFlags(flag.CommandLine) }

// TestSuites runs every spec against the cluster given by the framework's
// flags, e.g.
//
//	go test -tags e2e ./suites -args --kubeproof.cluster-info=/var/lib/kubeproof/kubeproof/cluster.json
func TestSuites(t *testing.T) {
	framework.RunSuite(t, "kubeproof")
}
