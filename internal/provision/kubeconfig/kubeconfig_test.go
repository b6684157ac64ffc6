package kubeconfig

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubeproof/kubeproof/internal/exitcode"
)

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
		want exitcode.Code
	}{
		"missing":     {filepath.Join(dir, "missing"), exitcode.Kubeconfig},
		"garbage":     {garbage, exitcode.Kubeconfig},
		"unreachable": {unreachable, exitcode.Unreachable},
	}
	if os.Geteuid() != 0 { // root reads mode-0 files
		cases["unreadable"] = struct {
			path string
			want exitcode.Code
		}{unreadable, exitcode.Kubeconfig}
	}
	for name, tc := range cases {
		_, err := New(tc.path, "").Info(context.Background())
		if got := exitcode.Of(err); got != tc.want {
			t.Errorf("%s: exit code %v, want %v (%v)", name, got, tc.want, err)
		}
	}
}
