package ownership

import (
	"os"
	"strings"
	"testing"
)

// The docs list every kind a run may leave behind: cleanup and the docs
// must not drift apart.
func TestDocsListEveryResource(t *testing.T) {
	doc, err := os.ReadFile("../../docs/your-cluster.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Resources {
		if !strings.Contains(string(doc), r.Resource) {
			t.Errorf("docs/your-cluster.md does not name %s (%s)", r.Resource, r.Why)
		}
	}
}
