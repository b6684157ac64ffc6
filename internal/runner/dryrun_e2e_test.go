//go:build e2e

package runner_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// A dry run lists, under each spec it would run, the selected claims that
// name it: the catalog's and those of a user's --claims-file. Specs carry
// only their spec:<id> label, so the claims come from the catalog, not from
// the specs (make interrupt runs this, through the real binary).
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
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(kubeproofBin(t), "run", "--dry-run", "-o", "json", "--focus", "seccomp", "--claims-file", mine).Output()
	if err != nil {
		t.Fatalf("kubeproof run --dry-run: %v: %s", err, out)
	}
	var doc struct {
		Specs []struct {
			ID     string   `json:"id"`
			Claims []string `json:"claims"`
		} `json:"specs"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
	if len(doc.Specs) != 1 || doc.Specs[0].ID != "kubelet-seccomp" {
		t.Fatalf("the dry run would run %+v, want kubelet-seccomp alone", doc.Specs)
	}
	for _, want := range []string{"004-SECCOMP", "MINE-SECCOMP"} {
		if !slices.Contains(doc.Specs[0].Claims, want) {
			t.Errorf("kubelet-seccomp's claims %v lack %s", doc.Specs[0].Claims, want)
		}
	}
}
