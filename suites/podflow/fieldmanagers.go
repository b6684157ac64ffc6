package podflow

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/observe"
)

// Who wrote the Pod, as the API itself shows it: the field manager of each
// client that wrote it. A field manager is the name the client gives
// (kubectl-client-side-apply, kubelet), not the user the API server
// authenticated, which only the audit log has; and the scheduler's binding
// leaves none (it goes through the binding subresource, whose Binding is
// not the Pod).
type fieldManagersEvidence struct {
	// Managers are the Pod's field managers once it was Ready, sorted.
	Managers []string `json:"managers"`
	// StatusBy are those of them that wrote its status subresource.
	StatusBy []string `json:"statusBy"`
	// BoundBeforeKubeletStatus: in the watch of the Pod, which delivers its
	// changes in the order the API server stored them, the Pod had a node
	// in an earlier change than the first with a status written by a field
	// manager named kubelet.
	BoundBeforeKubeletStatus bool `json:"boundBeforeKubeletStatus"`
	// StoredUnboundThenBound: the Pod's first version in the watch (as it
	// was created) had no node, and a later one had. The API server lets
	// no update of a Pod set spec.nodeName, so the node came through it,
	// by a Binding.
	StoredUnboundThenBound bool `json:"storedUnboundThenBound"`
}

var fieldManagers = framework.DeclareEvidence[fieldManagersEvidence]("fieldManagers", specCreate)

// recordFieldManagers reads the Pod's field managers from the watch of its
// namespace (every change, from before its creation).
func recordFieldManagers(events []observe.Event, name string) {
	bound, kubeletStatus := -1, -1
	var first, last *corev1.Pod
	for i, e := range events {
		p := framework.PodOf(e)
		if p == nil || p.Name != name {
			continue
		}
		if first == nil {
			first = p
		}
		last = p
		if bound < 0 && p.Spec.NodeName != "" {
			bound = i
		}
		if kubeletStatus < 0 && slices.ContainsFunc(p.ManagedFields, func(m metav1.ManagedFieldsEntry) bool { return m.Manager == "kubelet" && m.Subresource == "status" }) {
			kubeletStatus = i
		}
	}
	ev := fieldManagersEvidence{Managers: []string{}, StatusBy: []string{}, BoundBeforeKubeletStatus: bound >= 0 && kubeletStatus > bound,
		StoredUnboundThenBound: first != nil && first.Spec.NodeName == "" && bound >= 0}
	if last != nil {
		for _, m := range last.ManagedFields {
			if !slices.Contains(ev.Managers, m.Manager) {
				ev.Managers = append(ev.Managers, m.Manager)
			}
			if m.Subresource == "status" && !slices.Contains(ev.StatusBy, m.Manager) {
				ev.StatusBy = append(ev.StatusBy, m.Manager)
			}
		}
	}
	slices.Sort(ev.Managers)
	slices.Sort(ev.StatusBy)
	fieldManagers.Record(ev)
}
