package podsecuritytest

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeproof/kubeproof/kube/podsecurity"
)

func restrictedPod() corev1.PodSpec {
	no, yes := false, true
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "x", SecurityContext: &corev1.SecurityContext{
		AllowPrivilegeEscalation: &no, RunAsNonRoot: &yes,
		Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}}}}
}

// The evaluator refuses what PodSecurity admission refuses at a level and
// passes what it admits: a privileged container is refused at baseline, a
// Pod fitted to restricted passes it.
func TestViolations(t *testing.T) {
	if v := Violations(t, podsecurity.LevelRestricted, metav1.ObjectMeta{Name: "p"}, restrictedPod()); len(v) != 0 {
		t.Errorf("a restricted Pod: %v", v)
	}
	spec := restrictedPod()
	privileged := true
	spec.Containers[0].SecurityContext.Privileged = &privileged
	v := Violations(t, podsecurity.LevelBaseline, metav1.ObjectMeta{Name: "p"}, spec)
	if len(v) != 1 || !strings.Contains(v[0], "privileged") {
		t.Errorf("a privileged Pod at baseline: %v", v)
	}
	if v := Violations(t, podsecurity.LevelPrivileged, metav1.ObjectMeta{Name: "p"}, spec); len(v) != 0 {
		t.Errorf("a privileged Pod at privileged: %v", v)
	}
	var rec recorder
	Passes(&rec, "the webhook's Pod", podsecurity.LevelBaseline, metav1.ObjectMeta{Name: "p"}, spec)
	if len(rec.errors) != 1 || !strings.HasPrefix(rec.errors[0], "the webhook's Pod violates Pod Security baseline: ") {
		t.Errorf("Passes reported %v", rec.errors)
	}
}

// recorder is a testing.TB that keeps what would fail a test.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
