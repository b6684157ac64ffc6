package controlplane

import (
	"slices"
	"testing"
)

// A flag given again replaces every occurrence of the cluster's, list flags
// included; other flags and positional words stay in place.
func TestOverrideReplacesFlagsByName(t *testing.T) {
	args := []string{"kube-apiserver", "--authorization-mode=Node,RBAC", "--v=2", "--authorization-mode=Node"}
	got := Override(args, []string{"--authorization-mode=Node,ABAC,RBAC", "--authorization-policy-file=/p"})
	want := []string{"kube-apiserver", "--v=2", "--authorization-mode=Node,ABAC,RBAC", "--authorization-policy-file=/p"}
	if !slices.Equal(got, want) {
		t.Fatalf("override: got %q, want %q", got, want)
	}
}
