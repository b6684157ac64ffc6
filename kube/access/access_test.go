package access

import (
	"context"
	"errors"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// Check asks one SelfSubjectAccessReview per permission, in the run's
// namespace for those needed there (skipped without one) and in the named
// namespace for the others, and reports what the authorizer said.
func TestCheck(t *testing.T) {
	client := fake.NewClientset()
	var asked []authorizationv1.ResourceAttributes
	client.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
		attrs := *r.Spec.ResourceAttributes
		asked = append(asked, attrs)
		r.Status.Allowed = attrs.Resource != "nodes"
		if !r.Status.Allowed {
			r.Status.Reason = "RBAC: no rule"
		}
		return true, r, nil
	})
	got, err := Check(context.Background(), client, "kp-run-1", []Permission{Namespaces, Pods, Nodes, DefaultBindings})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || !got[0].Allowed || got[2].Allowed || got[2].Reason != "RBAC: no rule" {
		t.Errorf("results %+v", got)
	}
	if asked[1].Namespace != "kp-run-1" || asked[3].Namespace != "default" || asked[0].Namespace != "" || asked[3].Group != "rbac.authorization.k8s.io" {
		t.Errorf("asked %+v", asked)
	}
	got, _ = Check(context.Background(), client, "", []Permission{Pods, CSRApproval})
	if len(got) != 1 || got[0].Permission != CSRApproval {
		t.Errorf("without a run namespace: %+v", got)
	}
	client.PrependReactor("create", "selfsubjectaccessreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("connection refused")
	})
	if _, err := Check(context.Background(), client, "", []Permission{Nodes}); err == nil || err.Error() != "ask whether the user may create nodes: connection refused" {
		t.Errorf("a failed review: %v", err)
	}
}

// A permission reads as kubectl auth can-i takes it.
func TestPermissionString(t *testing.T) {
	for p, want := range map[Permission]string{
		Namespaces:      "create namespaces",
		Pods:            "create pods (in the run's namespaces)",
		CSRApproval:     "update certificatesigningrequests/approval.certificates.k8s.io",
		DefaultBindings: "create rolebindings.rbac.authorization.k8s.io (in namespace default)",
	} {
		if got := p.String(); got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
	if All[0] != Namespaces {
		t.Error("Namespaces is not checked first")
	}
}
