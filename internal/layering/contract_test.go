package layering

import (
	"strings"
	"testing"
)

// The cluster contract speaks neither CLI nor provisioning: it imports no
// package of internal/ (no exit codes, no progress printer), so a spec
// binary and a provider share only Info, capabilities, abilities and Open.
func TestContractIsNarrow(t *testing.T) {
	out := goList(t, "-f", "{{join .Imports \" \"}}", module+"framework/cluster")
	for _, imp := range strings.Fields(string(out)) {
		if strings.HasPrefix(imp, module+"internal/") {
			t.Errorf("framework/cluster imports %s", strings.TrimPrefix(imp, module))
		}
	}
}
