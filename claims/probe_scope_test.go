package claims

import (
	"strings"
	"testing"
)

// A probe that makes a cluster-scoped object, or stops, restarts or adds
// a component, must say scope: cluster; with it, it runs alone. Steps that
// restore or signal are checked too.
func TestProbeScope(t *testing.T) {
	const head = "apiVersion: kubeproof.io/v1alpha1\nkind: Claims\ndocument: {file: doc.md, title: Doc}\nprobes:\n- id: p-scope\n  description: d\n"
	for _, tc := range []struct {
		body, err string
		alone     bool
	}{
		{"  steps:\n  - apply: {manifest: \"apiVersion: node.k8s.io/v1\\nkind: RuntimeClass\\nmetadata: {name: x}\\nhandler: runc\\n\"}\n",
			"makes a RuntimeClass, which is cluster-scoped: declare scope: cluster", false},
		{"  scope: cluster\n  steps:\n  - apply: {manifest: \"apiVersion: node.k8s.io/v1\\nkind: RuntimeClass\\nmetadata: {name: x}\\nhandler: runc\\n\"}\n", "", true},
		{"  steps:\n  - restartComponent: {component: kubelet}\n", "restarts kubelet: declare scope: cluster", false},
		{"  scope: cluster\n  steps:\n  - restartComponent: {component: kubelet, config: {a: 1}}\n  - restoreComponent: kubelet\n", "", true},
		{"  scope: cluster\n  steps:\n  - restoreComponent: kubelet\n", "restores kubelet, which no step before it restarts", true},
		{"  scope: cluster\n  steps:\n  - restartComponent: {component: etcd}\n", `"etcd" is not a component a provider restarts`, true},
		{"  scope: cluster\n  steps:\n  - addComponent: {component: kube-scheduler, name: default-scheduler}\n", "not default-scheduler", true},
		{"  steps:\n  - signal: {pod: web, sandbox: true, container: app}\n", "a container or sandbox: true (not both)", false},
		{"  steps:\n  - signal: {pod: web, signal: STOP}\n", `signal "STOP" is not one of`, false},
		{"  scope: everything\n  steps:\n  - signal: {pod: web}\n", `scope "everything"`, false},
	} {
		cat := loadProbeFile(t, head+tc.body)
		err := cat.Validate()
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.body, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one with %q", tc.body, err, tc.err)
		}
		if p := cat.Probes[0]; p.RunsAlone() != tc.alone {
			t.Errorf("%s: runs alone %t, want %t", tc.body, p.RunsAlone(), tc.alone)
		}
	}
}
