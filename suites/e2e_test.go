//go:build e2e

package suites

import (
	"flag"
	"testing"

	"github.com/kubeproof/kubeproof/framework"
)

func init() { framework.RegisterFlags(flag.CommandLine) }

// TestSuites runs every spec against the cluster given by the framework's
// flags, e.g.
//
//	go test -tags e2e ./suites -args --kubeproof.cluster-info=/var/lib/kubeproof/kubeproof/cluster.json
func TestSuites(t *testing.T) {
	framework.RunSuite(t, "kubeproof")
}
