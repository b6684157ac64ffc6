//go:build !e2e

package suites

import (
	"testing"

	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/claims"
)

// The catalog and the specs must agree: every testable claim names specs
// that exist and carry its label, and every spec carries an ID and at least
// one claim label. A claim without a spec would be judged in advance; a spec
// without a claim checks nothing anyone documented.
func TestCatalogAndSpecsAgree(t *testing.T) {
	cat, err := claims.Load(fixtures.Claims())
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range claims.CheckLinks(cat, framework.ListSpecs()) {
		t.Error(err)
	}
	if n := len(cat.Claims); n == 0 {
		t.Fatal("the catalog is empty")
	}
}

// Every evidence path a claim names is one its specs declare, with a type
// the expected value can take: a renamed field fails here, not as a harness
// error after a cluster run.
func TestClaimsNameDeclaredEvidence(t *testing.T) {
	cat, err := claims.Load(fixtures.Claims())
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range claims.CheckEvidence(cat, framework.DeclaredEvidence()) {
		t.Error(err)
	}
}
