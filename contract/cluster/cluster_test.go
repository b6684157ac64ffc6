package cluster

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// Open tells a provider without abilities from one this program does not
// know: the first is a reason to skip, the second a broken setup.
func TestOpen(t *testing.T) {
	RegisterOpener("test-none", nil)
	if _, err := Open(&Info{Provider: "test-none"}); !errors.Is(err, ErrNoAbility) {
		t.Errorf("no opener: %v", err)
	}
	if _, err := Open(&Info{Provider: "test-unknown"}); err == nil || errors.Is(err, ErrNoAbility) {
		t.Errorf("unknown provider: %v", err)
	}
}

// A connection's failure says which it is, without exit codes.
func TestConnectErrors(t *testing.T) {
	_, _, err := Connect(context.Background(), filepath.Join(t.TempDir(), "missing"), "", 0)
	if !errors.Is(err, ErrKubeconfig) || errors.Is(err, ErrUnreachable) {
		t.Errorf("missing kubeconfig: %v", err)
	}
}
