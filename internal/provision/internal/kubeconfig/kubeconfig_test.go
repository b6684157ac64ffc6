package kubeconfig

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubeproof/kubeproof/contract/cluster"
)

// A kubeconfig that cannot be used and a cluster that does not answer are
// told apart by the contract's errors (the commands give each its exit
// code, exitcode.Classify in the engine).
func TestBadKubeconfigs(t *testing.T) {
	dir := t.TempDir()
	unreadable := filepath.Join(dir, "unreadable")
	if err := os.WriteFile(unreadable, []byte("x"), 0o000); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("this: [is not: a kubeconfig"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A kubeconfig whose server nothing listens on.
	unreachable := filepath.Join(dir, "unreachable")
	if err := os.WriteFile(unreachable, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		path string
		want error
	}{
		"missing":     {filepath.Join(dir, "missing"), cluster.ErrKubeconfig},
		"garbage":     {garbage, cluster.ErrKubeconfig},
		"unreachable": {unreachable, cluster.ErrUnreachable},
	}
	if os.Geteuid() != 0 { // root reads mode-0 files
		cases["unreadable"] = struct {
			path string
			want error
		}{unreadable, cluster.ErrKubeconfig}
	}
	for name, tc := range cases {
		_, err := New(tc.path, "").Info(context.Background())
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want an error that is %v", name, err, tc.want)
		}
	}
}
