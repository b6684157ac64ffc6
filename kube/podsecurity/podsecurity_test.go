package podsecurity_test

import (
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeproof/kubeproof/kube/podsecurity"
	"github.com/kubeproof/kubeproof/kube/podsecurity/podsecuritytest"
)

func TestRestrictedPasses(t *testing.T) {
	spec := podsecurity.Restricted(corev1.PodSpec{
		InitContainers:      []corev1.Container{{Name: "init", Image: "x"}},
		Containers:          []corev1.Container{{Name: "a", Image: "x"}, {Name: "b", Image: "x"}},
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "x"}}},
	})
	podsecuritytest.Passes(t, "a restricted Pod", podsecurity.LevelRestricted, metav1.ObjectMeta{}, spec)
	if *spec.SecurityContext.RunAsUser == 0 || !*spec.SecurityContext.RunAsNonRoot {
		t.Errorf("the Pod runs as %d, runAsNonRoot %t", *spec.SecurityContext.RunAsUser, *spec.SecurityContext.RunAsNonRoot)
	}
	// Idempotent: restricting twice changes nothing.
	again := podsecurity.Restricted(*spec.DeepCopy())
	if fmt.Sprint(again.SecurityContext) != fmt.Sprint(spec.SecurityContext) {
		t.Errorf("restricting twice changed the Pod: %v, then %v", spec.SecurityContext, again.SecurityContext)
	}
}

// What a spec set itself stays: a spec that looks at privilege keeps it.
func TestRestrictKeepsWhatIsSet(t *testing.T) {
	yes := true
	spec := podsecurity.Restricted(corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}},
		Containers:      []corev1.Container{{Name: "a", Image: "x", SecurityContext: &corev1.SecurityContext{Privileged: &yes}}},
	})
	if spec.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeUnconfined {
		t.Errorf("the Pod's own seccomp profile became %s", spec.SecurityContext.SeccompProfile.Type)
	}
	if !*spec.Containers[0].SecurityContext.Privileged {
		t.Error("the privileged container is not privileged any more")
	}
	if v := podsecuritytest.Violations(t, podsecurity.LevelBaseline, metav1.ObjectMeta{}, spec); len(v) == 0 {
		t.Error("a privileged, unconfined Pod passes baseline")
	}
}

// A container with ContainerContext passes restricted in a Pod that sets
// nothing: what the webhooks inject into other people's Pods.
func TestContainerContextPassesAlone(t *testing.T) {
	podsecuritytest.Passes(t, "a Pod of one container with ContainerContext", podsecurity.LevelRestricted, metav1.ObjectMeta{},
		corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "x", SecurityContext: podsecurity.ContainerContext()}}})
}

// A probe needs exactly its level: it passes it and fails every stricter one.
func TestProbeNeedsExactlyItsLevel(t *testing.T) {
	for _, level := range podsecurity.Levels {
		p := podsecurity.Probe("probe", "x", level)
		for _, enforced := range podsecurity.Levels {
			v := podsecuritytest.Violations(t, enforced, p.ObjectMeta, p.Spec)
			if want := enforced.Allows(level); want != (len(v) == 0) {
				t.Errorf("a probe of level %s under %s: violations %v, want admitted=%t", level, enforced, v, want)
			}
		}
	}
}

func TestLevels(t *testing.T) {
	for _, c := range []struct {
		l, m podsecurity.Level
		want bool
	}{
		{podsecurity.LevelPrivileged, podsecurity.LevelBaseline, true},
		{podsecurity.LevelBaseline, podsecurity.LevelRestricted, true},
		{podsecurity.LevelBaseline, podsecurity.LevelBaseline, true},
		{podsecurity.LevelRestricted, podsecurity.LevelBaseline, false},
		{podsecurity.LevelBaseline, podsecurity.LevelPrivileged, false},
	} {
		if got := c.l.Allows(c.m); got != c.want {
			t.Errorf("%s allows %s: %t, want %t", c.l, c.m, got, c.want)
		}
	}
	if _, err := podsecurity.ParseLevel("superuser"); err == nil {
		t.Error("an unknown level parses")
	}
}

// Only a need for more than restricted labels a namespace, and only with
// the enforce label.
func TestNamespaceLabels(t *testing.T) {
	if l := podsecurity.NamespaceLabels(podsecurity.LevelRestricted); len(l) != 0 {
		t.Errorf("restricted labels the namespace: %v", l)
	}
	for _, level := range []podsecurity.Level{podsecurity.LevelBaseline, podsecurity.LevelPrivileged} {
		l := podsecurity.NamespaceLabels(level)
		if len(l) != 1 || l[podsecurity.EnforceLabel] != string(level) {
			t.Errorf("%s: labels %v", level, l)
		}
	}
}

// A refusal by PodSecurity admission, as kube-apiserver words it, is told
// from other refusals.
func TestRefusalOf(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	psa := apierrors.NewForbidden(pods, "pair", errors.New(`violates PodSecurity "restricted:latest": seccompProfile (pod or containers "web", "side" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`))
	r, ok := podsecurity.RefusalOf(fmt.Errorf("create Pod pair: %w", psa))
	if !ok || r.Level != podsecurity.LevelRestricted || r.Version != "latest" {
		t.Errorf("PodSecurity's refusal: %+v, %t", r, ok)
	}
	if r, ok := podsecurity.ParseRefusal(403, `pods "p" is forbidden: violates PodSecurity "baseline:v1.37": privileged (container "app" must not set securityContext.privileged=true)`); !ok || r.Level != podsecurity.LevelBaseline || r.Version != "v1.37" {
		t.Errorf("baseline refusal: %+v, %t", r, ok)
	}
	for name, err := range map[string]error{
		"RBAC":        apierrors.NewForbidden(pods, "p", errors.New(`User "x" cannot create resource "pods"`)),
		"a webhook":   apierrors.NewForbidden(pods, "p", errors.New(`admission webhook "limits.kubeproof.io" denied the request: all containers must have resource limits`)),
		"not 403":     apierrors.NewBadRequest(`violates PodSecurity "restricted:latest": x`),
		"not the API": errors.New(`violates PodSecurity "restricted:latest": x`),
		"no error":    nil,
	} {
		if r, ok := podsecurity.RefusalOf(err); ok {
			t.Errorf("%s is taken for PodSecurity's refusal: %+v", name, r)
		}
	}
}

func TestHonoured(t *testing.T) {
	ns := func(labels map[string]string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels}}
	}
	if d := podsecurity.Honoured(ns(map[string]string{podsecurity.EnforceLabel: "baseline"}), podsecurity.LevelBaseline); d != "" {
		t.Errorf("a kept label: %s", d)
	}
	if d := podsecurity.Honoured(ns(map[string]string{podsecurity.EnforceLabel: "restricted"}), podsecurity.LevelBaseline); d == "" {
		t.Error("a changed label is taken as kept")
	}
	if d := podsecurity.Honoured(ns(nil), podsecurity.LevelPrivileged); d == "" {
		t.Error("a removed label is taken as kept")
	}
	if d := podsecurity.Honoured(ns(nil), podsecurity.LevelRestricted); d != "" {
		t.Errorf("restricted needs no label: %s", d)
	}
}
