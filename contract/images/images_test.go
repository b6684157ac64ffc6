package images

import (
	"strings"
	"testing"
)

// Our images are never pulled by default: no tag is latest, every name is
// in the loaded registry, and each is a program of this repository.
func TestImagesAreLoadedNotPulled(t *testing.T) {
	for _, img := range append(All, CNI) {
		if !strings.HasPrefix(img.Ref, LoadedRegistry+"/") || strings.HasSuffix(img.Ref, ":latest") || !strings.Contains(img.Ref, ":") {
			t.Errorf("%s: not a tagged name in %s", img.Ref, LoadedRegistry)
		}
		if !strings.HasPrefix(img.Program, "kubeproof-") {
			t.Errorf("%s: program %q is not one of kubeproof's", img.Ref, img.Program)
		}
	}
	if !IsWorkload(TestApp) || IsWorkload(Pause) {
		t.Error("the test app is a workload, the pause image is not")
	}
}

// With a registry, Pods and manifests name our images there at the run's
// tag, and nothing else in a manifest changes (a name in another registry
// that merely contains ours included); without one they keep the loaded
// names.
func TestRegistry(t *testing.T) {
	manifest := []byte("image: kubeproof.local/testapp:v1\n- \"kubeproof.local/webhook:v1\"\nother: registry.example/kubeproof.local/x\n")
	if got := string(Rewrite(manifest)); got != string(manifest) {
		t.Errorf("rewritten without a registry: %s", got)
	}
	if TestApp.PodRef() != TestApp.Ref {
		t.Errorf("PodRef %s without a registry", TestApp.PodRef())
	}
	UseRegistry("127.0.0.1:5000/kp/", "v0.2.0")
	defer UseRegistry(LoadedRegistry, "")
	if Registry() != "127.0.0.1:5000/kp" {
		t.Errorf("registry %s", Registry())
	}
	if got := TestApp.PodRef(); got != "127.0.0.1:5000/kp/testapp:v0.2.0" {
		t.Errorf("PodRef %s", got)
	}
	want := "image: 127.0.0.1:5000/kp/testapp:v0.2.0\n- \"127.0.0.1:5000/kp/webhook:v0.2.0\"\nother: registry.example/kubeproof.local/x\n"
	if got := string(Rewrite(manifest)); got != want {
		t.Errorf("rewritten %q, want %q", got, want)
	}
	UseRegistry("", "v9")
	if Registry() != "127.0.0.1:5000/kp" || TestApp.PodRef() != "127.0.0.1:5000/kp/testapp:v0.2.0" {
		t.Error("an empty registry changed the run's")
	}
}
