//go:build e2e

package runner_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kubeproof/kubeproof/internal/jsonschema"
)

// A dry run lists, under each spec it would run, the selected claims that
// name it: the catalog's, or, with a user's --claims-file, that file's (its
// claims are the selection), its probes among the specs. Specs carry only
// their spec:<id> label, so the claims come from the catalog, not from the
// specs (make interrupt runs this, through the real binary).
func TestDryRunListsClaims(t *testing.T) {
	mine := filepath.Join(t.TempDir(), "mine.yaml")
	if err := os.WriteFile(mine, []byte(`apiVersion: kubeproof.io/v1alpha1
kind: Claims
document: {file: mine.md, title: Mine}
claims:
- id: MINE-SECCOMP
  section: Isolation
  quote: "Containers are confined by seccomp."
  statement: A container's seccomp mode is filtering.
  component: container runtime
  kind: behaviour
  specs: [kubelet-seccomp]
  expect:
  - {evidence: seccomp.default, equals: "2"}
- id: MINE-PROBED
  section: Isolation
  quote: "A Pod is created."
  statement: Creating a Pod answers 201.
  component: kube-apiserver
  kind: status-code
  specs: [mine-probe]
  expect:
  - {evidence: steps.create.code, equals: 201}
probes:
- id: mine-probe
  description: a Pod is created
  steps:
  - name: create
    apply: {manifest: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: kubeproof.local/pause:v1}]}\n"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	type spec struct {
		ID     string   `json:"id"`
		Claims []string `json:"claims"`
	}
	dryRun := func(args ...string) []spec {
		t.Helper()
		out, err := exec.Command(kubeproofBin(t), append([]string{"run", "--dry-run", "-o", "json"}, args...)...).Output()
		if err != nil {
			t.Fatalf("kubeproof run --dry-run %v: %v: %s", args, err, out)
		}
		var doc struct {
			Specs []spec `json:"specs"`
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("decode %s: %v", out, err)
		}
		// The document the command prints is what its shipped schema says.
		if err := jsonschema.Validate("../../schemas/output/dry-run-v1.json", out); err != nil {
			t.Errorf("run --dry-run -o json %v: %v", args, err)
		}
		return doc.Specs
	}
	for _, tc := range []struct {
		args      []string
		specs     []string
		want, not string
	}{
		{[]string{"--focus", "seccomp"}, []string{"kubelet-seccomp"}, "004-SECCOMP", "MINE-SECCOMP"},
		{[]string{"--focus", "seccomp", "--claims-file", mine}, []string{"kubelet-seccomp"}, "MINE-SECCOMP", "004-SECCOMP"},
		{[]string{"--claims-file", mine}, []string{"kubelet-seccomp", "mine-probe"}, "MINE-PROBED", "004-SECCOMP"},
	} {
		specs := dryRun(tc.args...)
		var ids, claims []string
		for _, s := range specs {
			ids = append(ids, s.ID)
			claims = append(claims, s.Claims...)
		}
		slices.Sort(ids)
		if !slices.Equal(ids, tc.specs) {
			t.Errorf("%v: the dry run would run %v, want %v", tc.args, ids, tc.specs)
		}
		if !slices.Contains(claims, tc.want) || slices.Contains(claims, tc.not) {
			t.Errorf("%v: the claims listed are %v: want %s, not %s", tc.args, claims, tc.want, tc.not)
		}
	}
}
