package releases

import (
	"slices"
	"testing"
)

// Each Kubernetes minor gets the etcd its kubeadm installs; the minors are
// listed oldest first by number (v1.9 before v1.10, were it there); a
// release kubeproof does not know gets the default's etcd.
func TestReleases(t *testing.T) {
	minors := SupportedKubernetesMinors()
	if !slices.IsSortedFunc(minors, func(a, b string) int { return minorNumber(a) - minorNumber(b) }) || len(minors) < 2 {
		t.Errorf("minors %v", minors)
	}
	if !slices.Contains(minors, kubernetesMinor(DefaultKubernetesVersion)) {
		t.Errorf("the default %s is not supported: %v", DefaultKubernetesVersion, minors)
	}
	for version, want := range map[string]string{
		"v1.36.3":  "v3.6.16",
		"v1.37.2":  "v3.7.3",
		"v1.99.0":  EtcdVersionFor(DefaultKubernetesVersion),
		"nonsense": EtcdVersionFor(DefaultKubernetesVersion),
	} {
		if got := EtcdVersionFor(version); got != want {
			t.Errorf("EtcdVersionFor(%s) = %s, want %s", version, got, want)
		}
	}
	if minorNumber("v1.9") >= minorNumber("v1.10") {
		t.Error("minors compare as strings")
	}
}
