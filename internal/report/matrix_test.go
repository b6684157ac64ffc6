package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/claims"
	"github.com/kubeproof/kubeproof/internal/judge"
)

// other is sample() as another release saw it: the timing claim within
// the document's number.
func other() Report {
	r := sample()
	r.Cluster.KubernetesVersion = "v1.37.2"
	d := &r.Documents[0]
	for i := range d.Claims {
		if d.Claims[i].Claim.ID == "X-TIME" {
			d.Claims[i].Verdict = judge.Within
			d.Claims[i].Observations = []judge.Observation{{Evidence: "t.ms", Want: "between 100 and 500", Observed: 120.0, Found: true, Holds: true}}
		}
	}
	return r
}

func TestMatrixPutsDifferencesFirstWithBothSides(t *testing.T) {
	runs := []Report{sample(), other()}
	dirs := []string{"/r/a", "/r/b"}
	m := NewMatrix(runs, RunNames(runs, dirs), dirs)
	if len(m.Runs) != 2 || m.Runs[0].Name != "local v1.36.3" || m.Runs[1].Name != "local v1.37.2" {
		t.Fatalf("runs = %+v", m.Runs)
	}
	if len(m.Claims) != 4 || m.Claims[0].Claim.ID != "X-TIME" || !m.Claims[0].Differs || m.Claims[1].Differs {
		t.Fatalf("claims = %+v: want the differing X-TIME first", m.Claims)
	}
	dir := t.TempDir()
	if err := WriteMatrixFiles(dir, m); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "matrix.md"))
	for _, want := range []string{"Claims whose verdict differs (1)", "**local v1.36.3**: faster: ✗ t.ms = 3.6", "**local v1.37.2**: within: ✓ t.ms = 120"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("matrix.md lacks %q:\n%s", want, md)
		}
	}
	html, _ := os.ReadFile(filepath.Join(dir, "matrix.html"))
	if !strings.Contains(string(html), "X-TIME") || !strings.Contains(string(html), "<style>") {
		t.Errorf("matrix.html lacks the claim or the report style")
	}
}

func TestRunNamesTellEqualRunsApart(t *testing.T) {
	runs := []Report{sample(), sample()}
	names := RunNames(runs, []string{"/x/ci-job-1", "/x/ci-job-2"})
	if names[0] == names[1] || !strings.HasSuffix(names[1], "(ci-job-2)") {
		t.Errorf("names = %q", names)
	}
}

// A claim refuted on both runs for different parts of its sentence is
// listed apart: one component changed between the releases.
func TestMatrixFindsAPartThatDiffers(t *testing.T) {
	two := func(first, second bool) Report {
		r := sample()
		d := &r.Documents[0]
		d.Claims = append(d.Claims, judge.Result{
			Claim:   claims.Claim{ID: "X-BOTH", Kind: claims.Behaviour, Statement: "both list first"},
			Verdict: judge.Refuted,
			Observations: []judge.Observation{
				{Evidence: "a.initialState", Observed: "list", Found: true, Holds: first},
				{Evidence: "b.initialState", Observed: "watch-list", Found: true, Holds: second},
			},
		})
		return r
	}
	runs := []Report{two(true, false), two(false, false)}
	m := NewMatrix(runs, []string{"old", "new"}, nil)
	partly := m.PartlyDiffering()
	if len(partly) != 1 || partly[0].Claim.ID != "X-BOTH" || len(m.Differing()) != 0 {
		t.Fatalf("partly = %+v, differing = %+v", partly, m.Differing())
	}
	if m.Claims[0].Claim.ID != "X-BOTH" {
		t.Errorf("the partly differing claim is not listed before the same ones: %s first", m.Claims[0].Claim.ID)
	}
}
