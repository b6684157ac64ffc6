package layering

import (
	"strings"
	"testing"
)

// The cluster contract speaks neither CLI nor provisioning: it imports no
// package of internal/ (no exit codes, no progress printer), so a spec
// binary and a provider share only Info, capabilities, abilities and Open.
func TestContractIsNarrow(t *testing.T) {
	out := goList(t, "-f", "{{join .Imports \" \"}}", module+"contract/cluster")
	for _, imp := range strings.Fields(string(out)) {
		if strings.HasPrefix(imp, module+"internal/") {
			t.Errorf("contract/cluster imports %s", strings.TrimPrefix(imp, module))
		}
	}
}

// The Framework's package imports none of its own sub-packages (the rule
// of the Kubernetes e2e framework): what it stands on are libraries beside
// it (contract/, kube/, claims/), and a package under framework/ would be
// a helper standing on the Framework, never under it.
func TestFrameworkImportsNoSubpackage(t *testing.T) {
	out := goList(t, "-f", "{{join .Imports \" \"}}", module+"framework")
	for _, imp := range strings.Fields(string(out)) {
		if strings.HasPrefix(imp, module+"framework/") {
			t.Errorf("framework imports its sub-package %s", strings.TrimPrefix(imp, module))
		}
	}
}
