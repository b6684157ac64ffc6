package judge

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/claims/expect"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/framework"

	// The suites declare the evidence (and its Go types) facts are named by.
	_ "github.com/kubeproof/kubeproof/suites"
)

// judgeRealRun judges cat on the kept real run's specs.
func judgeRealRun(t *testing.T, cat *claims.Catalog) []Result {
	t.Helper()
	real := loadRealRun(t)
	run, err := LoadGinkgoReport(specsJSON(t, real.Specs, recordEntries))
	if err != nil {
		t.Fatal(err)
	}
	return Claims(cat.Claims, run.Specs, &cluster.Info{Provider: "local", Capabilities: real.Cluster.Capabilities})
}

func catalogFacts(t *testing.T) (*claims.Catalog, *claims.Facts) {
	t.Helper()
	cat, err := claims.Load(fixtures.Claims())
	if err != nil {
		t.Fatal(err)
	}
	return cat, claims.NewFacts(append(framework.DeclaredEvidence(), cat.ProbeEvidence()...))
}

// One fact, one verdict, on a real run: no two claims of the catalog read
// one observation two ways.
func TestRealRunOneFactOneVerdict(t *testing.T) {
	cat, facts := catalogFacts(t)
	for _, s := range Inconsistencies(judgeRealRun(t, cat), facts) {
		t.Error(s)
	}
}

// The check finds what it is for: with 004-RESTART-RELIST conditional on a
// watch that streams the state (as the catalog had it), it and
// 004-REFLECTOR-LIST-WATCH read the real run's initialState two ways.
func TestRealRunInconsistencyIsFound(t *testing.T) {
	cat, facts := catalogFacts(t)
	for i, c := range cat.Claims {
		if c.ID == "004-RESTART-RELIST" {
			cat.Claims[i].Conditional = []claims.Alternative{{Condition: "with a watch that streams the state first",
				Expect: []expect.Expectation{{Evidence: "relist.initialState", Equals: raw(`"watch-list"`)}}}}
		}
	}
	found := Inconsistencies(judgeRealRun(t, cat), facts)
	if len(found) != 1 || !strings.Contains(found[0], "004-REFLECTOR-LIST-WATCH") || !strings.Contains(found[0], "004-RESTART-RELIST") {
		t.Fatalf("the older reading of 004-RESTART-RELIST: %v", found)
	}
}

func raw(s string) *json.RawMessage {
	m := json.RawMessage(s)
	return &m
}
