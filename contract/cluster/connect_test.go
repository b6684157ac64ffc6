package cluster

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// A $KUBECONFIG whose files do not exist is named in the error, not taken
// for no $KUBECONFIG at all.
func TestRESTConfigNamesAMissingKUBECONFIG(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	t.Setenv("KUBECONFIG", missing)
	t.Setenv("HOME", t.TempDir())
	_, err := RESTConfig("", "")
	if !errors.Is(err, ErrKubeconfig) || !strings.Contains(err.Error(), "$KUBECONFIG names "+missing) {
		t.Errorf("err = %v, want one naming $KUBECONFIG's %s", err, missing)
	}
	t.Setenv("KUBECONFIG", "")
	_, err = RESTConfig("", "")
	if err == nil || !strings.Contains(err.Error(), "no $KUBECONFIG and no ~/.kube/config") {
		t.Errorf("without $KUBECONFIG: err = %v", err)
	}
}
