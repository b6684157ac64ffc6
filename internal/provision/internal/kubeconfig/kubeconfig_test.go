package kubeconfig

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/provision/internal/config"
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

// A run in a Pod of the cluster keeps what the run outside knew of the
// nodes (their images) and names its position in the reason of each
// capability it lacks, so that a verdict that differs between the two
// runs says why.
func TestInCluster(t *testing.T) {
	info := &cluster.Info{Provider: ProviderName, Reasons: map[cluster.Capability]string{
		cluster.AuditLog: "outside", cluster.LoadImage: "outside", cluster.NodeExec: "outside",
	}}
	(&Provider{InCluster: &config.InCluster{Provider: "local", LoadedImages: true}}).inCluster(info)
	if !info.Has(cluster.LoadImage) || info.Reasons[cluster.LoadImage] != "" {
		t.Errorf("the nodes' images did not carry in: %+v", info)
	}
	for _, c := range []cluster.Capability{cluster.AuditLog, cluster.EtcdAccess, cluster.NodeExec, cluster.ControlPlaneFlags, cluster.ClusterCA} {
		if info.Has(c) || !strings.Contains(info.Missing(c), "runs in a Pod of the cluster (run --in-cluster)") {
			t.Errorf("%s: %q", c, info.Missing(c))
		}
	}
	outside := &cluster.Info{Reasons: map[cluster.Capability]string{cluster.AuditLog: "outside"}}
	(&Provider{}).inCluster(outside)
	if outside.Reasons[cluster.AuditLog] != "outside" {
		t.Errorf("a run outside changed its reasons: %v", outside.Reasons)
	}
}
