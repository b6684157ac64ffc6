package controlplane

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/contract/cluster"
)

// Flags replace those of the same name; feature gates merge with the
// ones the command line had, into one flag; a component that reads its
// gates from its configuration keeps its flags as they are.
func TestChangeArgs(t *testing.T) {
	args := []string{"kube-apiserver", "--v=2", "--feature-gates=A=true,B=false"}
	change := cluster.ComponentChange{Args: []string{"--v=4"}, FeatureGates: map[string]bool{"B": true, "C": false}}
	got := ChangeArgs(args, change, false)
	want := []string{"kube-apiserver", "--v=4", "--feature-gates=A=true,B=true,C=false"}
	if !slices.Equal(got, want) {
		t.Errorf("ChangeArgs = %q, want %q", got, want)
	}
	if got := ChangeArgs(args, change, true); !slices.Equal(got, []string{"kube-apiserver", "--feature-gates=A=true,B=false", "--v=4"}) {
		t.Errorf("gates in config: %q", got)
	}
}

// A configuration is patched as JSON merge patch, gates into featureGates.
func TestPatchConfig(t *testing.T) {
	in := "kind: KubeletConfiguration\nfeatureGates:\n  A: true\ncrashLoopBackOff:\n  maxContainerRestartPeriod: 300s\n"
	out, err := PatchConfig([]byte(in), cluster.ComponentChange{
		Config:       map[string]any{"crashLoopBackOff": map[string]any{"maxContainerRestartPeriod": "2s"}},
		FeatureGates: map[string]bool{"B": false},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"maxContainerRestartPeriod: 2s", "A: true", "B: false", "kind: KubeletConfiguration"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("patched configuration lacks %q:\n%s", want, out)
		}
	}
}
