package probe

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/claims/evidence"
)

const probeYAML = `
id: p-one
description: a Pod and its history
observe:
- name: pod
  object: {apiVersion: v1, kind: Pod, name: web, fields: {phase: "{.status.phase}"}}
steps:
- apply: {file: pod.yaml}
- name: running
  wait: {observer: pod, field: phase, condition: {equals: Running}, timeout: 90s}
- stopComponent: kube-scheduler
- name: back
  startComponent: kube-scheduler
`

func decode(t *testing.T, text string) Probe {
	t.Helper()
	var p Probe
	if err := yaml.UnmarshalStrict([]byte(text), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// A probe's steps are named (step<N> without a name), its evidence is
// declared per observer and for its steps, and one that stops a component
// says so (it runs alone).
func TestProbe(t *testing.T) {
	p := decode(t, probeYAML)
	if errs := p.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := p.StepNames(); strings.Join(got, ",") != "step1,running,step3,back" {
		t.Errorf("step names %v", got)
	}
	if !p.StopsComponents() {
		t.Error("a probe that stops the scheduler does not say so")
	}
	decls := p.Evidence(evidence.Source{File: "mine.yaml"})
	if len(decls) != 2 || decls[0].Name != StepsEvidence || decls[1].Name != "pod" || decls[0].Source.File != "mine.yaml" {
		t.Fatalf("decls %+v", decls)
	}
	if _, err := evidence.Resolve(decls[0].Type, "steps.running.took"); err != nil {
		t.Error(err)
	}
	if _, err := evidence.Resolve(decls[1].Type, "pod.last.phase"); err != nil {
		t.Error(err)
	}
	if got := decls[0].Type.Field(0).Type; got != reflect.TypeFor[StepResult]() {
		t.Errorf("a step's evidence is %s", got)
	}
}

// An apply step's file is read relative to the claims file; an inline
// manifest is used as written.
func TestManifest(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pod.yaml"), []byte("kind: Pod\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lp := LoadedProbe{Probe: decode(t, probeYAML), Path: filepath.Join(dir, "claims.yaml")}
	if got, err := lp.Manifest(*lp.Steps[0].Apply); err != nil || string(got) != "kind: Pod\n" {
		t.Errorf("from the file: %q, %v", got, err)
	}
	if got, _ := lp.Manifest(Apply{Manifest: "kind: Service\n"}); string(got) != "kind: Service\n" {
		t.Errorf("inline: %q", got)
	}
	if _, err := lp.Manifest(Apply{File: "gone.yaml"}); err == nil || !strings.Contains(err.Error(), "probe p-one: read manifest") {
		t.Errorf("a missing file: %v", err)
	}
}

func TestParseTimeout(t *testing.T) {
	if d, err := ParseTimeout("", time.Minute); d != time.Minute || err != nil {
		t.Errorf("default: %s %v", d, err)
	}
	if d, err := ParseTimeout("90s", time.Minute); d != 90*time.Second || err != nil {
		t.Errorf("90s: %s %v", d, err)
	}
	for _, bad := range []string{"soon", "-1s", "0s"} {
		if _, err := ParseTimeout(bad, time.Minute); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// Validate names the step or observer each problem is in.
func TestValidate(t *testing.T) {
	for name, tc := range map[string]struct{ from, to, want string }{
		"no description":  {"description: a Pod and its history", "description: ''", "description is required"},
		"two actions":     {"- apply: {file: pod.yaml}", "- apply: {file: pod.yaml}\n  delete: {apiVersion: v1, kind: Pod, name: web}", "step step1: give exactly one of apply"},
		"apply both":      {"{file: pod.yaml}", "{file: pod.yaml, manifest: x}", "apply needs a manifest or a file (one)"},
		"wait no field":   {"field: phase,", "field: phaze,", `observer pod has no field "phaze" (it has phase)`},
		"start unstopped": {"- stopComponent: kube-scheduler\n", "", "starts kube-scheduler, which no step before it stops"},
		"observer kind":   {"  object: {apiVersion", "  events: {kind: Pod, name: web}\n  object: {apiVersion", "observer pod: give exactly one of"},
		"as no user":      {"- name: back\n", "- kubectl: [get, pods]\n  as: {groups: [g]}\n- name: back\n", "as: give exactly one of user, serviceAccount, anonymous"},
		"bad capability":  {"id: p-one\n", "id: p-one\nrequires: [Wings]\n", `requires "Wings", which is not a capability`},
	} {
		text := strings.Replace(probeYAML, tc.from, tc.to, 1)
		if text == probeYAML {
			t.Fatalf("%s: the replacement changed nothing", name)
		}
		errs := strings.Join(decode(t, text).Validate(), "\n")
		if !strings.Contains(errs, tc.want) {
			t.Errorf("%s: %q, want %q", name, errs, tc.want)
		}
	}
}
