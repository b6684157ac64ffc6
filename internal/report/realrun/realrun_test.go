package realrun

import (
	"os"
	"testing"
)

// The kept run is there and decodes: a report of a local cluster whose
// specs and claims the tests of the report and the judge read.
func TestDecode(t *testing.T) {
	if _, err := os.Stat(Path()); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Cluster struct{ Provider string } `json:"cluster"`
		Specs   []struct{ ID string }     `json:"specs"`
		Summary map[string]int            `json:"summary"`
	}
	Decode(t, &r)
	if r.Cluster.Provider != "local" || len(r.Specs) < 50 || r.Summary["confirmed"] == 0 {
		t.Errorf("the kept run: provider %q, %d specs, summary %v", r.Cluster.Provider, len(r.Specs), r.Summary)
	}
}
