// Package podsecurity is what kubeproof knows of the Pod Security Standards
// and of PodSecurity admission: the three levels, the namespace label that
// enforces one, kubeproof's Pods made to pass the strictest level
// (restricted), Pods of each level to ask the API server about, and telling
// a refusal by PodSecurity admission from other refusals.
//
// kubeproof's Pods pass restricted wherever a spec does not look at
// privilege itself, so that a hardened cluster (restricted enforced by
// default) runs them; a spec that needs more declares the level, its
// namespace gets the label for it, and a cluster that refuses that is
// observed from the API server's answers, never guessed from its
// configuration.
package podsecurity

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Level is a Pod Security Standard.
type Level string

// The levels, from the most restrictive.
const (
	LevelRestricted Level = "restricted"
	LevelBaseline   Level = "baseline"
	LevelPrivileged Level = "privileged"
)

// Levels are the levels from the most restrictive to the most permissive.
var Levels = []Level{LevelRestricted, LevelBaseline, LevelPrivileged}

// ParseLevel reads a level's name.
func ParseLevel(s string) (Level, error) {
	for _, l := range Levels {
		if string(l) == s {
			return l, nil
		}
	}
	return "", fmt.Errorf("unknown Pod Security level %q (want restricted, baseline or privileged)", s)
}

// rank orders the levels by what they allow.
func (l Level) rank() int {
	for i, m := range Levels {
		if m == l {
			return i
		}
	}
	return -1
}

// Allows reports whether level l admits every Pod that level m admits.
func (l Level) Allows(m Level) bool { return l.rank() >= m.rank() }

// EnforceLabel is the namespace label that sets the level PodSecurity
// admission enforces there; without it the cluster's default applies (its
// admission configuration; privileged when it has none).
const EnforceLabel = "pod-security.kubernetes.io/enforce"

// NamespaceLabels are the labels a namespace whose Pods need level gets:
// none for restricted (the strictest level passes everywhere), the
// enforce label for the others.
func NamespaceLabels(level Level) map[string]string {
	if level == LevelRestricted || level == "" {
		return nil
	}
	return map[string]string{EnforceLabel: string(level)}
}

// UID and GID are the user and group kubeproof's containers run as: not
// root, numeric (the kubelet can check runAsNonRoot without reading the
// image), and the conventional "nonroot" of minimal images. Our programs
// write nothing but sockets and listen above 1024.
const (
	UID int64 = 65532
	GID int64 = 65532
)

// Restrict makes spec pass the restricted standard, filling only what is
// unset: the Pod runs as UID:GID, not root, with the runtime's default
// seccomp profile; every container (init and ephemeral ones too) may not
// gain privileges and drops every capability. What a spec set itself
// stays, so a spec that looks at privilege (a privileged container, a Pod
// without a seccomp profile) keeps it and declares the level it needs.
func Restrict(spec *corev1.PodSpec) {
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	sc := spec.SecurityContext
	if sc.RunAsNonRoot == nil {
		sc.RunAsNonRoot = ptr(true)
	}
	if sc.RunAsUser == nil {
		sc.RunAsUser = ptr(UID)
	}
	if sc.RunAsGroup == nil {
		sc.RunAsGroup = ptr(GID)
	}
	if sc.SeccompProfile == nil {
		sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	for i := range spec.InitContainers {
		restrictContainer(&spec.InitContainers[i].SecurityContext)
	}
	for i := range spec.Containers {
		restrictContainer(&spec.Containers[i].SecurityContext)
	}
	for i := range spec.EphemeralContainers {
		restrictContainer(&spec.EphemeralContainers[i].SecurityContext)
	}
}

// Restricted returns spec made to pass the restricted standard (Restrict).
func Restricted(spec corev1.PodSpec) corev1.PodSpec {
	Restrict(&spec)
	return spec
}

func restrictContainer(scp **corev1.SecurityContext) {
	if *scp == nil {
		*scp = &corev1.SecurityContext{}
	}
	sc := *scp
	if sc.AllowPrivilegeEscalation == nil {
		sc.AllowPrivilegeEscalation = ptr(false)
	}
	if sc.Capabilities == nil {
		sc.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
	}
}

// ContainerContext is a container security context that passes the
// restricted standard on its own, whatever the Pod sets: for containers
// added to other people's Pods (kubeproof's mutating webhooks inject some).
func ContainerContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr(true),
		RunAsUser:                ptr(UID),
		RunAsGroup:               ptr(GID),
		AllowPrivilegeEscalation: ptr(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// Probe is a Pod that needs exactly level: it passes level and fails every
// stricter one. Created as a dry run in a namespace, it asks the API server
// whether Pods of that level are admitted there.
func Probe(name, image string, level Level) *corev1.Pod {
	c := corev1.Container{Name: "probe", Image: image}
	spec := corev1.PodSpec{Containers: []corev1.Container{c}, AutomountServiceAccountToken: ptr(false)}
	switch level {
	case LevelRestricted:
		Restrict(&spec)
	case LevelBaseline:
		// No security context: baseline admits it, restricted does not
		// (no runAsNonRoot, no seccomp profile, privilege escalation and
		// capabilities left as they are).
	case LevelPrivileged:
		spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr(true)}
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
}

// Refusal is a request that PodSecurity admission refused.
type Refusal struct {
	// Level and Version are the policy that was enforced ("restricted",
	// "latest").
	Level   Level
	Version string
	// Message is the API server's message.
	Message string
}

func (r Refusal) String() string { return r.Message }

// refusalMarker starts what PodSecurity admission says when it refuses a
// Pod: violates PodSecurity "restricted:latest": <the checks it fails>.
const refusalMarker = `violates PodSecurity "`

// RefusalOf recognises err as the API server's refusal by PodSecurity
// admission: HTTP 403 Forbidden with its message.
func RefusalOf(err error) (Refusal, bool) {
	var status apierrors.APIStatus
	if err == nil || !errors.As(err, &status) {
		return Refusal{}, false
	}
	s := status.Status()
	return ParseRefusal(int(s.Code), s.Message)
}

// ParseRefusal recognises an answer (status code and message) as a refusal
// by PodSecurity admission.
func ParseRefusal(code int, message string) (Refusal, bool) {
	if code != 403 {
		return Refusal{}, false
	}
	_, rest, ok := strings.Cut(message, refusalMarker)
	if !ok {
		return Refusal{}, false
	}
	policy, _, ok := strings.Cut(rest, `"`)
	if !ok {
		return Refusal{}, false
	}
	level, version, _ := strings.Cut(policy, ":")
	l, err := ParseLevel(level)
	if err != nil {
		return Refusal{}, false
	}
	return Refusal{Level: l, Version: version, Message: message}, true
}

// Honoured says whether a namespace as the API server stored it carries
// the enforce label for level (a mutating policy may have changed it);
// "" if it does, else what it carries instead.
func Honoured(ns *corev1.Namespace, level Level) string {
	want := NamespaceLabels(level)[EnforceLabel]
	if want == "" {
		return ""
	}
	got, ok := ns.Labels[EnforceLabel]
	switch {
	case !ok:
		return "the namespace was stored without the label " + EnforceLabel
	case got != want:
		return fmt.Sprintf("the namespace was stored with %s=%s instead", EnforceLabel, got)
	}
	return ""
}

func ptr[T any](v T) *T { return &v }
