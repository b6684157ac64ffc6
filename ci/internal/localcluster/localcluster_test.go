package localcluster

import "testing"

func TestKubeconfigOf(t *testing.T) {
	for env, want := range map[string]string{
		"export KUBECONFIG='/var/lib/kubeproof/kp act/kubeconfig'\n": "/var/lib/kubeproof/kp act/kubeconfig",
		"export PATH=/x\nexport KUBECONFIG=/k\n":                     "/k",
		"export PATH=/x\n":                                           "",
	} {
		if got := kubeconfigOf(env); got != want {
			t.Errorf("kubeconfigOf(%q) = %q, want %q", env, got, want)
		}
	}
}
