//go:build !e2e

package suites

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/claims/speclink"
	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/framework"
)

// ownCatalog is the catalog built into kubeproof, which these tests hold
// against the specs, the seeds and the docs.
func ownCatalog(t *testing.T) *claims.Catalog {
	t.Helper()
	cat, err := claims.Load(fixtures.Claims())
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// The catalog and the specs must agree: every testable claim names specs
// that exist and carry its label, and every spec carries an ID and at least
// one claim label. A claim without a spec would be judged in advance; a spec
// without a claim checks nothing anyone documented.
func TestCatalogAndSpecsAgree(t *testing.T) {
	cat := ownCatalog(t)
	for _, err := range speclink.CheckLinks(cat, framework.ListSpecs()) {
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
	cat := ownCatalog(t)
	for _, err := range claims.CheckEvidence(cat, framework.DeclaredEvidence()) {
		t.Error(err)
	}
}

// The selections the README and docs show (label filters, --document) name
// claims, specs and documents that exist: an example that selects nothing
// is the first thing a new user would copy.
func TestDocsExamplesSelectSomething(t *testing.T) {
	cat := ownCatalog(t)
	specs := map[string]bool{}
	for _, s := range framework.ListSpecs() {
		specs[s.ID] = true
	}
	label := regexp.MustCompile(`\b(claim|spec):([A-Z0-9][A-Za-z0-9-]*|[a-z][a-z0-9-]*)`)
	document := regexp.MustCompile(`--document ([0-9]{3})\b`)
	files, _ := filepath.Glob("../docs/*.md")
	for _, file := range append(files, "../README.md") {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if !strings.Contains(line, "kubeproof ") {
				continue // only commands
			}
			for _, m := range label.FindAllStringSubmatch(line, -1) {
				if _, ok := cat.Claim(m[2]); m[1] == "claim" && !ok {
					t.Errorf("%s: %q selects no claim: %s", file, m[0], line)
				}
				if m[1] == "spec" && !specs[m[2]] {
					t.Errorf("%s: %q selects no spec: %s", file, m[0], line)
				}
			}
			for _, m := range document.FindAllStringSubmatch(line, -1) {
				found := false
				for _, c := range cat.Claims {
					found = found || strings.HasPrefix(c.ID, m[1]+"-")
				}
				if !found {
					t.Errorf("%s: %q selects no document's claims: %s", file, m[0], line)
				}
			}
		}
	}
}

// One fact, one verdict: claims that hold the same kind of evidence to the
// same expectation read its failure alike (both refuted, or both
// conditional), unless one names the other in differsFrom with the reason.
func TestOneFactOneVerdict(t *testing.T) {
	cat := ownCatalog(t)
	for _, err := range claims.CheckConsistency(cat, append(framework.DeclaredEvidence(), cat.ProbeEvidence()...)) {
		t.Error(err)
	}
}

// A conditional verdict names a real condition: none of the catalog's
// conditions merely restricts its claim to where it held.
func TestConditionsNameAConditionOfTheirOwn(t *testing.T) {
	for _, err := range claims.CheckConditions(ownCatalog(t).Claims) {
		t.Error(err)
	}
}
