// Package podsecuritytest holds Pods against the Pod Security Standards as
// PodSecurity admission does, with its own policy evaluator
// (k8s.io/pod-security-admission), for the unit tests of what kubeproof
// creates. It is for tests only: kubeproof itself asks the cluster.
package podsecuritytest

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/kubeproof/kubeproof/kube/podsecurity"
)

// Violations are what PodSecurity admission, enforcing level at its latest
// version, would refuse the Pod for; none when it passes.
func Violations(t testing.TB, level podsecurity.Level, meta metav1.ObjectMeta, spec corev1.PodSpec) []string {
	t.Helper()
	l, err := psaapi.ParseLevel(string(level))
	if err != nil {
		t.Fatal(err)
	}
	eval, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range eval.EvaluatePod(psaapi.LevelVersion{Level: l, Version: psaapi.LatestVersion()}, &meta, &spec) {
		if !r.Allowed {
			out = append(out, fmt.Sprintf("%s: %s", r.ForbiddenReason, r.ForbiddenDetail))
		}
	}
	return out
}

// Passes fails the test when the Pod (what says which) does not pass level.
func Passes(t testing.TB, what string, level podsecurity.Level, meta metav1.ObjectMeta, spec corev1.PodSpec) {
	t.Helper()
	if v := Violations(t, level, meta, spec); len(v) > 0 {
		t.Errorf("%s violates Pod Security %s: %v", what, level, v)
	}
}
