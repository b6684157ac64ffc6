// Package access names the permissions a kubeproof run needs from the
// kubeconfig's user, and checks them with SelfSubjectAccessReviews: on a
// cluster kubeproof did not make, the user may lack some, and the specs
// that need them are then not checkable rather than failed.
package access

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Permission is one thing the run's user must be allowed to do.
type Permission struct {
	Verb, Group, Resource, Subresource string
	// InRunNamespace: the permission is needed in the run's own namespaces
	// (checked in one of them); otherwise cluster-wide, or in the named
	// Namespace.
	InRunNamespace bool
	Namespace      string
	// For says which specs need it.
	For string
}

// String names the permission as `kubectl auth can-i` takes it.
func (p Permission) String() string {
	r := p.Resource
	if p.Subresource != "" {
		r += "/" + p.Subresource
	}
	if p.Group != "" {
		r += "." + p.Group
	}
	switch {
	case p.InRunNamespace:
		return p.Verb + " " + r + " (in the run's namespaces)"
	case p.Namespace != "":
		return p.Verb + " " + r + " (in namespace " + p.Namespace + ")"
	}
	return p.Verb + " " + r
}

// The permissions the specs need. Namespaces is needed by every spec; the
// others only by the specs For names.
var (
	Namespaces         = Permission{Verb: "create", Resource: "namespaces", For: "every spec (each runs in a namespace of its own)"}
	Pods               = Permission{Verb: "create", Resource: "pods", InRunNamespace: true, For: "every spec that runs a Pod"}
	Deployments        = Permission{Verb: "create", Group: "apps", Resource: "deployments", InRunNamespace: true, For: "the controller specs and the webhook server"}
	Nodes              = Permission{Verb: "create", Resource: "nodes", For: "the scheduler specs' simulated Nodes, the node authorizer spec"}
	MutatingWebhooks   = Permission{Verb: "create", Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations", For: "the admission webhook specs"}
	ValidatingWebhooks = Permission{Verb: "create", Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations", For: "the admission webhook specs"}
	Policies           = Permission{Verb: "create", Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies", For: "the ValidatingAdmissionPolicy spec"}
	CRDs               = Permission{Verb: "create", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", For: "the storage spec's custom resource"}
	CSRApproval        = Permission{Verb: "update", Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Subresource: "approval", For: "specs that act as a test user with a client certificate (authentication, authorization, validation order)"}
	AccessReviews      = Permission{Verb: "create", Group: "authorization.k8s.io", Resource: "subjectaccessreviews", For: "the authorization specs"}
	TokenReviews       = Permission{Verb: "create", Group: "authentication.k8s.io", Resource: "tokenreviews", For: "the authentication spec"}
	ClusterRoles       = Permission{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "clusterroles", For: "the RBAC spec (the seed's ClusterRole)"}
	DefaultBindings    = Permission{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "rolebindings", Namespace: "default", For: "the RBAC spec (the seed's RoleBinding in default)"}
	NodeProxy          = Permission{Verb: "get", Resource: "nodes", Subresource: "proxy", For: "the CRI spec (a kubelet's metrics and configuration)"}
	PersistentVolumes  = Permission{Verb: "create", Resource: "persistentvolumes", For: "the volume binding specs (a static PersistentVolume)"}
	StorageClasses     = Permission{Verb: "create", Group: "storage.k8s.io", Resource: "storageclasses", For: "the scheduler's volume binding spec (a class that waits for its first consumer)"}
)

// DeleteNamespaces is how a run removes what it made: each spec's
// namespace, with everything in it.
var DeleteNamespaces = Permission{Verb: "delete", Resource: "namespaces", For: "every spec (its namespace is removed after it)"}

// Essential are the permissions without which no spec can run and leave
// the cluster as it found it: a run without one stops before it changes
// anything, naming every one it lacks.
var Essential = []Permission{Namespaces, DeleteNamespaces}

// All are the permissions a run checks, Namespaces first.
var All = []Permission{Namespaces, Pods, Deployments, Nodes, MutatingWebhooks, ValidatingWebhooks, Policies, CRDs, CSRApproval, AccessReviews, TokenReviews, ClusterRoles, DefaultBindings, NodeProxy, PersistentVolumes, StorageClasses}

// Result is what the API server said of one permission.
type Result struct {
	Permission Permission
	Allowed    bool
	// Reason is the authorizer's reason, if it gave one.
	Reason string
}

// Check asks the API server, with one SelfSubjectAccessReview per
// permission, what the client's user may do; runNS is a namespace of the
// run for the permissions needed there ("" skips them).
func Check(ctx context.Context, client kubernetes.Interface, runNS string, perms []Permission) ([]Result, error) {
	var out []Result
	for _, p := range perms {
		ns := p.Namespace
		if p.InRunNamespace {
			if runNS == "" {
				continue
			}
			ns = runNS
		}
		review, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: ns, Verb: p.Verb, Group: p.Group, Resource: p.Resource, Subresource: p.Subresource,
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			return out, fmt.Errorf("ask whether the user may %s: %w", p, err)
		}
		out = append(out, Result{Permission: p, Allowed: review.Status.Allowed, Reason: review.Status.Reason})
	}
	return out, nil
}
