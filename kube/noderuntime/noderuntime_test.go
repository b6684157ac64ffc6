package noderuntime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/contract/cluster"
)

// fakeCtr is a ctr that answers from files: the IDs it lists and each
// container's info, and logs the arguments it was run with.
const fakeCtr = `#!/bin/sh
echo "$@" >> "$(dirname "$0")/calls"
shift 4 # --address A --namespace k8s.io
case "$1 $2" in
"containers ls") cat "$(dirname "$0")/ids" ;;
"containers info") cat "$(dirname "$0")/info-$3" ;;
"tasks exec") echo "ran in $5: $6 $7" ;;
*) echo "unknown $*" >&2; exit 1 ;;
esac
`

func nodeWith(t *testing.T) (*cluster.Info, string) {
	t.Helper()
	dir := t.TempDir()
	write := func(name, text string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("ctr", fakeCtr, 0o755)
	write("ids", "app\nsandbox\nother\ngone\n", 0o644)
	labels := func(kind, name, pod string) string {
		return `{"Labels":{"io.kubernetes.pod.namespace":"ns","io.kubernetes.pod.name":"` + pod + `","io.cri-containerd.kind":"` + kind + `","io.kubernetes.container.name":"` + name + `"},`
	}
	write("info-app", labels("container", "app", "web")+`"CreatedAt":"2026-11-27T10:00:02Z"}`, 0o644)
	write("info-sandbox", labels("sandbox", "", "web")+`"CreatedAt":"2026-11-27T10:00:01Z"}`, 0o644)
	write("info-other", labels("container", "app", "other")+`"CreatedAt":"2026-11-27T10:00:00Z"}`, 0o644)
	info := &cluster.Info{Capabilities: []cluster.Capability{cluster.NodeExec}, ContainerdAddress: "/run/containerd.sock",
		Ctr: filepath.Join(dir, "ctr"), NodeExec: &cluster.NodeExecSpec{Prefix: []string{"env", "NODE=" + cluster.NodePlaceholder}}}
	return info, dir
}

// The Pod's containers as the node's containerd holds them, sandbox first
// (by creation), another Pod's and one removed meanwhile left out; the
// runtime is asked in the CRI's namespace at the cluster's address.
func TestContainers(t *testing.T) {
	info, dir := nodeWith(t)
	cs, err := Containers(context.Background(), info, "n1", "ns", "web")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].Kind != "sandbox" || cs[1].Name != "app" || !cs[0].CreatedAt.Before(cs[1].CreatedAt) {
		t.Errorf("containers %+v", cs)
	}
	calls, _ := os.ReadFile(filepath.Join(dir, "calls"))
	first := strings.SplitN(string(calls), "\n", 2)[0]
	if first != `--address /run/containerd.sock --namespace k8s.io containers ls -q labels."io.kubernetes.pod.namespace"==ns,labels."io.kubernetes.pod.name"==web` {
		t.Errorf("first call %q", first)
	}
	out, err := Exec(context.Background(), info, "n1", "app", "cat", "/etc/hostname")
	if err != nil || !strings.HasPrefix(string(out), "ran in app: cat /etc/hostname") {
		t.Errorf("exec %q, %v", out, err)
	}
}

// Without the node's runtime, both say which capability is missing, and
// why; a ctr that fails is an error naming the command and the node.
func TestWithoutNodeExec(t *testing.T) {
	info := &cluster.Info{Provider: "kubeconfig", Reasons: map[cluster.Capability]string{cluster.NodeExec: "a kubeconfig reaches no node"}}
	want := "provider kubeconfig lacks capability NodeExec: a kubeconfig reaches no node"
	if _, err := Containers(context.Background(), info, "n1", "ns", "web"); err == nil || err.Error() != want {
		t.Errorf("Containers: %v", err)
	}
	if _, err := Exec(context.Background(), info, "n1", "app", "true"); err == nil || err.Error() != want {
		t.Errorf("Exec: %v", err)
	}
	info, dir := nodeWith(t)
	if err := os.Remove(filepath.Join(dir, "ids")); err != nil {
		t.Fatal(err)
	}
	if _, err := Containers(context.Background(), info, "n1", "ns", "web"); err == nil || !strings.Contains(err.Error(), "on node n1") {
		t.Errorf("a failing ctr: %v", err)
	}
}
