// Package ownership marks what a kubeproof run creates in a cluster, so that
// the run's objects can be told from everyone else's and removed by label
// when the run could not remove them itself (`kubeproof cleanup`).
//
// Every namespace a run makes carries Label; so does every object it makes
// outside them (Resources lists their kinds). Objects inside a run's
// namespaces go with the namespace.
package ownership

import (
	"context"
	"fmt"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Label is the key of the label every object of a run carries; its value
// is the run's ID.
const Label = "kubeproof.io/run"

// Labels are the labels that mark an object as run id's.
func Labels(id string) map[string]string { return map[string]string{Label: id} }

// Mark adds the labels of run id to obj.
func Mark(obj metav1.Object, id string) {
	l := obj.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	maps.Copy(l, Labels(id))
	obj.SetLabels(l)
}

// Resource is a kind of object a run may create outside its namespaces.
type Resource struct {
	schema.GroupVersionResource
	// Namespaced: the objects live in namespaces the run did not make
	// (Leases in kube-node-lease, RoleBindings in default).
	Namespaced bool
	// Why says which specs make them, for docs and cleanup's output.
	Why string
}

// Resources are the kinds a run creates, cluster-scoped ones after the
// namespaced ones whose namespaces are not the run's; namespaces last (they
// take their contents with them).
var Resources = []Resource{
	{gvr("coordination.k8s.io", "v1", "leases"), true, "the Leases of simulated Nodes (kube-node-lease)"},
	{gvr("rbac.authorization.k8s.io", "v1", "rolebindings"), true, "the seed's RoleBinding in default (RBAC spec)"},
	{gvr("", "v1", "nodes"), false, "simulated Nodes (scheduler specs) and a Node object no kubelet runs (node authorizer spec)"},
	{gvr("rbac.authorization.k8s.io", "v1", "clusterrolebindings"), false, "the binding of a run inside the cluster (run --in-cluster) to its ClusterRole"},
	{gvr("rbac.authorization.k8s.io", "v1", "clusterroles"), false, "the seed's ClusterRole (RBAC spec); the ClusterRole of a run inside the cluster"},
	{gvr("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations"), false, "webhook configurations that match only the spec's namespace (admission specs)"},
	{gvr("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations"), false, "webhook configurations that match only the spec's namespace (admission specs)"},
	{gvr("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies"), false, "a ValidatingAdmissionPolicy (admission specs)"},
	{gvr("admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings"), false, "its binding, to the spec's namespace only"},
	{gvr("apiextensions.k8s.io", "v1", "customresourcedefinitions"), false, "a CRD of a group named after the spec's namespace (storage spec)"},
	{gvr("certificates.k8s.io", "v1", "certificatesigningrequests"), false, "CSRs for the client certificates of test users (authentication specs)"},
	{gvr("", "v1", "namespaces"), false, "every spec's namespace, the canary's, trace's and bench's"},
}

func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

// Found is an object of a run, as Find lists it.
type Found struct {
	Resource  Resource
	Namespace string
	Name      string
	Run       string
}

// String names the object as kubectl would.
func (f Found) String() string {
	kind := f.Resource.Resource
	if f.Resource.Group != "" {
		kind += "." + f.Resource.Group
	}
	if f.Namespace != "" {
		return fmt.Sprintf("%s %s/%s (run %s)", kind, f.Namespace, f.Name, f.Run)
	}
	return fmt.Sprintf("%s %s (run %s)", kind, f.Name, f.Run)
}

// Selector selects the objects of run id, or of every run if id is "".
func Selector(id string) string {
	if id == "" {
		return Label
	}
	return Label + "=" + id
}

// Find lists the objects of run id (every run's, if id is ""), in the
// order Remove deletes them. A kind the cluster does not serve, or the
// user may not list, is skipped; the error names the first such kind.
func Find(ctx context.Context, client dynamic.Interface, id string) ([]Found, error) {
	var out []Found
	var firstErr error
	for _, r := range Resources {
		list, err := client.Resource(r.GroupVersionResource).List(ctx, metav1.ListOptions{LabelSelector: Selector(id)})
		if err != nil {
			if !apierrors.IsNotFound(err) && firstErr == nil {
				firstErr = fmt.Errorf("list %s: %w", r.Resource, err)
			}
			continue
		}
		for _, item := range list.Items {
			out = append(out, Found{Resource: r, Namespace: item.GetNamespace(), Name: item.GetName(), Run: item.GetLabels()[Label]})
		}
	}
	return out, firstErr
}

// Remove deletes the objects Find listed. Objects already gone are no
// error.
func Remove(ctx context.Context, client dynamic.Interface, found []Found) error {
	for _, f := range found {
		ri := client.Resource(f.Resource.GroupVersionResource)
		var err error
		if f.Namespace != "" {
			err = ri.Namespace(f.Namespace).Delete(ctx, f.Name, metav1.DeleteOptions{})
		} else {
			err = ri.Delete(ctx, f.Name, metav1.DeleteOptions{})
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete %s: %w", f, err)
		}
	}
	return nil
}
