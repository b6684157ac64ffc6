package probes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/claims/probe"
)

// A probe needs the canary to have seen kubeproof's images run when a
// manifest it applies names one, inline or in its file, or when a file
// cannot be read (its step then says why); otherwise it does not.
func TestUsesOurImages(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ours.yaml", "image: kubeproof.local/testapp:v1\n")
	write("theirs.yaml", "kind: ConfigMap\n")
	lp := func(steps ...probe.Step) probe.LoadedProbe {
		return probe.LoadedProbe{Probe: probe.Probe{ID: "p", Steps: steps}, Path: filepath.Join(dir, "claims.yaml")}
	}
	apply := func(a probe.Apply) probe.Step { return probe.Step{Apply: &a} }
	for name, c := range map[string]struct {
		p    probe.LoadedProbe
		want bool
	}{
		"inline ours":     {lp(apply(probe.Apply{Manifest: "image: kubeproof.local/testapp:v1"})), true},
		"file ours":       {lp(apply(probe.Apply{File: "theirs.yaml"}), apply(probe.Apply{File: "ours.yaml"})), true},
		"file not there":  {lp(apply(probe.Apply{File: "gone.yaml"})), true},
		"none of ours":    {lp(apply(probe.Apply{File: "theirs.yaml"}), probe.Step{Kubectl: []string{"get", "pods"}}), false},
		"no apply at all": {lp(probe.Step{Kubectl: []string{"version"}}), false},
	} {
		if got := usesOurImages(c.p); got != c.want {
			t.Errorf("%s: %t, want %t", name, got, c.want)
		}
	}
	if strings.Join(containerArg("sidecar"), " ") != "-c sidecar" || containerArg("") != nil {
		t.Error("containerArg")
	}
}
