package trace

import (
	"encoding/json"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeproof/kubeproof/kube/audit"
	"github.com/kubeproof/kubeproof/kube/noderuntime"
	"github.com/kubeproof/kubeproof/kube/podstate"
	"github.com/kubeproof/kubeproof/webhooks"
)

// timeline is what one run recorded, from which the stages are read.
type timeline struct {
	w         workload
	pod       *corev1.Pod // the followed Pod, as it ended
	readySeen time.Time   // when our watch saw it Ready
	started   time.Time   // when kubectl was started
	events    []audit.Event
	calls     []webhooks.Call
	runtime   []noderuntime.Container
	// notes say why a source is missing ("audit", "webhook").
	notes map[string]string
}

// stages reads the timeline. Times are from the API server's receipt of
// the create request (the audit log's requestReceivedTimestamp), or, with
// no audit log, from kubectl's start.
func (t timeline) stages() []Stage {
	top := t.first(created(resourceOf(t.w.kind), t.w.name, ""))
	t0, origin := t.started, SourceClient
	if top != nil {
		t0, origin = top.RequestReceivedTimestamp, SourceAudit
	}
	at := func(name string, tm time.Time, source, note string) Stage {
		if tm.IsZero() {
			return Stage{Name: name, Source: SourceNone, Note: note}
		}
		return Stage{Name: name, Ms: ms(t0, tm), Source: source, Note: note}
	}
	fromAudit := func(name string, e *audit.Event, received bool, note string) Stage {
		if e == nil {
			return Stage{Name: name, Source: SourceNone, Note: joinNonEmpty("; ", note, t.notes["audit"])}
		}
		tm := e.StageTimestamp
		if received {
			tm = e.RequestReceivedTimestamp
		}
		return at(name, tm, SourceAudit, note)
	}
	pod := t.pod.Name
	var out []Stage
	out = append(out, at("request received", t0, origin, "the API server receives kubectl's create"))
	out = append(out, Stage{Name: "authenticated, authorized", Source: SourceNone,
		Note: "the API server does not time these apart; both finish before admission (the next stage)"})

	var admitted time.Time
	for _, c := range t.calls {
		if c.Kind == t.w.kind && c.Operation == "CREATE" && !c.DryRun && c.Name == t.w.name {
			admitted = c.Arrived
			break
		}
	}
	admittedNote := joinNonEmpty("; ", "kubeproof's recorder webhook receives the object", t.notes["webhook"])
	// Admission happens inside the create; an arrival outside the create's
	// audit window means the webhook's clock and the API server's differ.
	if top != nil && !admitted.IsZero() && (admitted.Before(top.RequestReceivedTimestamp) || admitted.After(top.StageTimestamp)) {
		admittedNote += "; outside the create's audit window: the webhook's clock differs from the API server's"
	}
	out = append(out, at("admitted (mutating webhook called)", admitted, SourceWebhook, admittedNote))
	out = append(out, fromAudit("persisted (201 Created)", top, false, "the create's response is complete"))
	if t.w.kind == "Deployment" {
		// The ReplicaSet is named, and its Pods generate-named, after the
		// Deployment: that tells them from anything else in the namespace.
		out = append(out, fromAudit("ReplicaSet created", t.first(created("replicasets", "", t.w.name+"-")), false, "by the deployment controller"))
		out = append(out, fromAudit("Pod created", t.first(created("pods", "", t.w.name+"-")), false, "by the ReplicaSet controller (the first Pod)"))
	}
	out = append(out, fromAudit("Pod bound", t.first(func(e audit.Event) bool {
		return e.Verb == "create" && e.ObjectRef.Resource == "pods" && e.ObjectRef.Subresource == "binding" && e.ObjectRef.Name == pod
	}), false, "the scheduler's binding"))
	kubelet := func(e audit.Event) bool {
		return strings.HasPrefix(e.User.Username, "system:node:") && e.ObjectRef.Resource == "pods" && e.ObjectRef.Name == pod
	}
	out = append(out, fromAudit("kubelet acts on the Pod", t.first(kubelet), true, "the kubelet's first request about the Pod"))

	sandbox := Stage{Name: "sandbox created", Source: SourceNone, Note: "no runtime record and no PodReadyToStartContainers condition"}
	for _, c := range t.runtime {
		if c.Kind == "sandbox" {
			sandbox = at(sandbox.Name, c.CreatedAt, SourceRuntime, "containerd's record of the Pod sandbox")
			break
		}
	}
	if sandbox.Ms == nil {
		if c := podstate.Condition(t.pod.Status.Conditions, corev1.PodReadyToStartContainers); c != nil && c.Status == corev1.ConditionTrue {
			sandbox = at(sandbox.Name, c.LastTransitionTime.Time, SourceCondition, "PodReadyToStartContainers")
		}
	}
	out = append(out, sandbox)
	out = append(out, fromAudit("containers running", t.first(func(e audit.Event) bool {
		return kubelet(e) && e.ObjectRef.Subresource == "status" && statusPatch(e).allRunning()
	}), true, "the kubelet's status update that reports every container running"))
	ready := fromAudit("Ready", t.first(func(e audit.Event) bool {
		return kubelet(e) && e.ObjectRef.Subresource == "status" && statusPatch(e).ready()
	}), true, "the kubelet's status update that sets Ready=True")
	if ready.Ms == nil {
		ready = at("Ready", t.readySeen, SourceWatch, "our watch saw Ready=True")
	} else if !t.readySeen.IsZero() {
		ready.Note += "; our watch saw it at " + format(ms(t0, t.readySeen)) + " ms"
	}
	out = append(out, ready)
	out = append(out, fromAudit("endpoint ready", endpointReady(t.events, t.pod), false, "the EndpointSlice controller marks the Pod's endpoint ready"))
	return out
}

func resourceOf(kind string) string {
	if kind == "Deployment" {
		return "deployments"
	}
	return "pods"
}

// created matches the create of a resource named name, or, with name
// empty, of one whose name or generateName starts with prefix. A
// generate-named object has no name in the audit event, only in the
// request body.
func created(resource, name, prefix string) func(audit.Event) bool {
	return func(e audit.Event) bool {
		if e.Verb != "create" || e.ObjectRef.Resource != resource || e.ObjectRef.Subresource != "" {
			return false
		}
		if name != "" {
			return e.ObjectRef.Name == name
		}
		if strings.HasPrefix(e.ObjectRef.Name, prefix) {
			return true
		}
		var body metav1.PartialObjectMetadata
		_ = json.Unmarshal(e.RequestObject, &body)
		return strings.HasPrefix(body.Name, prefix) || strings.HasPrefix(body.GenerateName, prefix)
	}
}

// first is the earliest received event that match selects.
func (t timeline) first(match func(audit.Event) bool) *audit.Event {
	var best *audit.Event
	for i, e := range t.events {
		if e.ObjectRef == nil || !match(e) {
			continue
		}
		if best == nil || e.RequestReceivedTimestamp.Before(best.RequestReceivedTimestamp) {
			best = &t.events[i]
		}
	}
	return best
}

// podStatusPatch is the part of a kubelet's status patch trace reads.
type podStatusPatch struct {
	Status struct {
		Conditions        []corev1.PodCondition    `json:"conditions"`
		ContainerStatuses []corev1.ContainerStatus `json:"containerStatuses"`
	} `json:"status"`
}

func statusPatch(e audit.Event) podStatusPatch {
	var p podStatusPatch
	_ = json.Unmarshal(e.RequestObject, &p)
	return p
}

// allRunning: a patch carries every container's status, so any non-empty
// list that is all running means all are.
func (p podStatusPatch) allRunning() bool { return podstate.AllRunning(p.Status.ContainerStatuses, 1) }

func (p podStatusPatch) ready() bool {
	return podstate.ConditionTrue(p.Status.Conditions, corev1.PodReady)
}
