package etcd

import "testing"

// The object's key is the one that ends in its resource path, under
// whatever prefix; two are ambiguous, none is not found.
func TestKeyFor(t *testing.T) {
	keys := []string{"/elsewhere/pods/ns/web", "/elsewhere/pods/ns/web-2", "/elsewhere/apps/deployments/ns/web"}
	if k, err := keyFor(keys, "pods/ns/web"); err != nil || k != "/elsewhere/pods/ns/web" {
		t.Errorf("keyFor(pods/ns/web) = %q, %v", k, err)
	}
	if k, err := keyFor(keys, "pods/ns/gone"); err != nil || k != "" {
		t.Errorf("keyFor(pods/ns/gone) = %q, %v; want none", k, err)
	}
	if _, err := keyFor(append(keys, "/other/pods/ns/web"), "pods/ns/web"); err == nil {
		t.Error("two keys ending in pods/ns/web: no error")
	}
}
