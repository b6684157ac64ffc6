package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/contract/testapp"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
	"github.com/kubeproof/kubeproof/kube/podsecurity/podsecuritytest"
)

// What the API server specs read of answers: the user a 403 names, whose
// an authorizer request is, how a request ended, who answered a fetch,
// how kubectl authenticated, and whether a refusal names a field.
func TestReadings(t *testing.T) {
	if got := userInMessage(`pods is forbidden: User "system:anonymous" cannot list resource "pods"`); got != "system:anonymous" {
		t.Errorf("userInMessage %q", got)
	}
	if userInMessage("Unauthorized") != "" || !hasUser("alice get configmaps", "alice") || hasUser("alicia get configmaps", "alice") {
		t.Error("userInMessage/hasUser")
	}
	timeout := apierrors.NewTimeoutError("etcd request timed out", 1)
	for err, want := range map[error]string{
		nil:                      "created",
		context.DeadlineExceeded: "no answer within the window",
		fmt.Errorf("create: %w", context.DeadlineExceeded): "no answer within the window",
		timeout:                          "Timeout: Timeout: etcd request timed out",
		errors.New("connection refused"): "connection refused",
	} {
		if got := outcome(err); got != want {
			t.Errorf("outcome(%v) = %q, want %q", err, got, want)
		}
	}
	if got := answered(testapp.FetchResult{Requests: 5, Responses: map[string]int{"server": 5}}, nil); got != "answers by Pod: map[server:5] of 5 requests" {
		t.Errorf("answered %q", got)
	}
	if got := answered(testapp.FetchResult{Requests: 5, LastError: "connection refused"}, nil); got != "no answer to 5 requests: connection refused" {
		t.Errorf("no answer %q", got)
	}
	if authorizationKind(map[string]string{"Authorization": "Bearer secret"}) != "Bearer" || !strings.HasPrefix(authorizationKind(nil), "client certificate") {
		t.Error("authorizationKind shows the secret or misses the certificate")
	}
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "x", nil)
	invalid.ErrStatus.Details.Causes = []metav1.StatusCause{{Field: "spec.containers[0].image"}}
	if !causedBy(framework.Response{Status: invalid.ErrStatus}, "spec.containers[0].image") || causedBy(framework.Response{}, "x") {
		t.Error("causedBy")
	}
}

// The Pods and objects the specs send are what they mean to send: valid
// Pods of our image that pass the restricted level (with what a spec adds
// to one), an ABAC policy of one line that lets a user read ConfigMaps,
// and the seed's RoleBinding.
func TestObjects(t *testing.T) {
	var p corev1.Pod
	if err := json.Unmarshal([]byte(validPodJSON("web", `"terminationGracePeriodSeconds":3`)), &p); err != nil {
		t.Fatal(err)
	}
	if p.Name != "web" || p.Spec.TerminationGracePeriodSeconds == nil || *p.Spec.TerminationGracePeriodSeconds != 3 {
		t.Errorf("valid Pod %+v", p)
	}
	podsecuritytest.Passes(t, "the validation spec's Pod", podsecurity.LevelRestricted, p.ObjectMeta, p.Spec)
	for _, pod := range []*corev1.Pod{workloadPod("server", map[string]string{"app": "s"}), podUsingSecret("reader", "s", "n1")} {
		podsecuritytest.Passes(t, pod.Name, podsecurity.LevelRestricted, pod.ObjectMeta, pod.Spec)
	}
	policy := abacPolicy("alice", "ns")
	var line struct {
		Kind string `json:"kind"`
		Spec struct {
			User, Namespace, Resource string
			Readonly                  bool
		} `json:"spec"`
	}
	if strings.Count(string(policy), "\n") != 1 || json.Unmarshal(policy, &line) != nil ||
		line.Kind != "Policy" || line.Spec.User != "alice" || line.Spec.Resource != "configmaps" || !line.Spec.Readonly {
		t.Errorf("policy %s", policy)
	}
	rb := seedRoleBinding()
	if data, _ := yaml.Marshal(rb); rb.Kind != "RoleBinding" || rb.RoleRef.Kind == "" || len(rb.Subjects) == 0 {
		t.Errorf("the seed's RoleBinding:\n%s", data)
	}
}
