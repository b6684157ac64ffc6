package podflow

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/audit"
)

// kubectl's create request, from the audit log.
type requestEvidence struct {
	// Verb, Path and Code are the request's verb, path (generalized) and
	// status code.
	Verb string `json:"verb"`
	Path string `json:"path"`
	Code int    `json:"code"`
	// UserAgent is its user agent; Kubectl: that is kubectl's.
	UserAgent string `json:"userAgent"`
	Kubectl   bool   `json:"kubectl"`
}

// The binding request, from the audit log.
type bindingEvidence struct {
	// Verb, Subresource, User, Code and Path are the binding request's verb,
	// subresource, user, status code and path (generalized).
	Verb        string `json:"verb"`
	Subresource string `json:"subresource"`
	User        string `json:"user"`
	Code        int    `json:"code"`
	Path        string `json:"path"`
}

// A component's watch of Pods, from the audit log.
type watchEvidence struct {
	// Found: the audit log has a watch of Pods by the component's user.
	Found bool `json:"found"`
	// FieldSelector and Path are that watch's fieldSelector and path.
	FieldSelector string `json:"fieldSelector"`
	Path          string `json:"path"`
}

// Who wrote to the Pod, by role.
type writersEvidence struct {
	// Identities are the roles (client, scheduler, kubelet, controller
	// manager...) of the users that wrote to the Pod, sorted; Count is how
	// many.
	Identities []string `json:"identities"`
	Count      int      `json:"count"`
}

// The writes to the Pod's status, from the audit log.
type statusWritesEvidence struct {
	// Count is how many writes to the Pod's status the audit log has by the
	// kubelet's first one; ByKubelet how many of them are the kubelet's.
	Count     int `json:"count"`
	ByKubelet int `json:"byKubelet"`
}

// The controller manager's writes to the Pod, from the audit log.
type controllerWritesEvidence struct {
	// Count is how many writes to the Pod the controller manager made;
	// Requests summarize them.
	Count    int      `json:"count"`
	Requests []string `json:"requests"`
}

// The order of the requests, arrival to arrival.
type auditOrderEvidence struct {
	// CreateBeforeBinding and BindingBeforeFirstStatus: the create arrived
	// before the binding, the binding before the kubelet's first status
	// write.
	CreateBeforeBinding      bool `json:"createBeforeBinding"`
	BindingBeforeFirstStatus bool `json:"bindingBeforeFirstStatus"`
}

var (
	request        = framework.DeclareEvidence[requestEvidence]("request", specCreate)
	binding        = framework.DeclareEvidence[bindingEvidence]("binding", specCreate)
	schedulerWatch = framework.DeclareEvidence[watchEvidence]("schedulerWatch", specCreate)
	// The controller manager's watch of Pods: its shared informers' (they
	// run as the controller manager's own user, not a controller's
	// ServiceAccount).
	controllerManagerWatch = framework.DeclareEvidence[watchEvidence]("controllerManagerWatch", specCreate)
	kubeletWatch           = framework.DeclareEvidence[watchEvidence]("kubeletWatch", specCreate)
	writers                = framework.DeclareEvidence[writersEvidence]("writers", specCreate)
	statusWrites           = framework.DeclareEvidence[statusWritesEvidence]("statusWrites", specCreate)
	controllerWrites       = framework.DeclareEvidence[controllerWritesEvidence]("controllerWrites", specCreate)
	auditOrder             = framework.DeclareEvidence[auditOrderEvidence]("auditOrder", specCreate)
)

// recordSchedulerWatch reads the scheduler's and the controller manager's
// watches of Pods from the audit log: they began when those components
// started, long before the spec.
func recordSchedulerWatch(log *audit.Log) {
	ginkgo.GinkgoHelper()
	watches, err := podWatches(log)
	framework.ExpectNoError(err, "read the pod watches from the audit log")
	schedulerWatch.Record(watchOf(watches, "system:kube-scheduler"))
	controllerManagerWatch.Record(watchOf(watches, "system:kube-controller-manager"))
}

func podWatches(log *audit.Log) ([]audit.Event, error) {
	return log.Since(0, audit.All(audit.Verbs("watch"), func(e audit.Event) bool {
		return e.ObjectRef != nil && e.ObjectRef.Resource == "pods" && e.ObjectRef.Namespace == ""
	}))
}

func watchOf(watches []audit.Event, user string) watchEvidence {
	for _, w := range watches {
		if w.User.Username == user {
			return watchEvidence{Found: true, FieldSelector: w.Query("fieldSelector"), Path: w.Path()}
		}
	}
	return watchEvidence{}
}

// recordCreateRequest reads kubectl's create of the Pod from the audit log.
func recordCreateRequest(ctx context.Context, f *framework.Framework, log *audit.Log, from audit.Offset) {
	ginkgo.GinkgoHelper()
	events, err := log.WaitFor(ctx, from, framework.Timeout.Audit, "the Pod's create request", audit.All(audit.On("pods", f.Namespace, podName, ""), audit.Verbs("create"), subresource("")), audit.AtLeast(1))
	framework.ExpectNoError(err, "read the Pod's create request from the audit log")
	c := events[0]
	request.Record(requestEvidence{Verb: c.Verb, Path: f.Generalize(c.Path(), nil), Code: c.Code(),
		UserAgent: c.UserAgent, Kubectl: strings.HasPrefix(c.UserAgent, "kubectl/")})
}

// recordBinding reads the binding of the Pod and the kubelet's watch.
func recordBinding(ctx context.Context, f *framework.Framework, log *audit.Log, from audit.Offset, node string) {
	ginkgo.GinkgoHelper()
	events, err := log.WaitFor(ctx, from, framework.Timeout.Audit, "the Pod's binding", audit.All(audit.On("pods", f.Namespace, podName, "binding")), audit.AtLeast(1))
	framework.ExpectNoError(err, "read the Pod's binding from the audit log")
	b := events[0]
	binding.Record(bindingEvidence{Verb: b.Verb, Subresource: b.ObjectRef.Subresource, User: b.User.Username,
		Code: b.Code(), Path: f.Generalize(b.Path(), map[string]string{podName: "{name}"})})
	watches, err := podWatches(log)
	framework.ExpectNoError(err, "read the pod watches from the audit log")
	kubeletWatch.Record(watchOf(watches, "system:node:"+node))
}

// recordStatusWrites reads who wrote to the Pod (the client, the
// scheduler, the kubelet, controllers) and in which order.
func recordStatusWrites(ctx context.Context, f *framework.Framework, log *audit.Log, from audit.Offset, node string) {
	ginkgo.GinkgoHelper()
	ginkgo.By("reading the audit log: who wrote the Pod, and when")
	onPod := audit.On("pods", f.Namespace, podName, "*")
	nodeUser := "system:node:" + node
	// The first kubelet status write arrives soon after Ready; wait for it.
	events, err := log.WaitFor(ctx, from, framework.Timeout.Audit, "the kubelet's status write", onPod, func(es []audit.Event) bool {
		return firstEvent(es, subresource("status"), audit.By(nodeUser)) != nil
	})
	framework.ExpectNoError(err, "read the Pod's status writes from the audit log")
	create := firstEvent(events, audit.Verbs("create"), subresource(""))
	bindingReq := firstEvent(events, subresource("binding"))
	firstStatus := firstEvent(events, subresource("status"), audit.By(nodeUser))

	roles, statusCount, byKubelet := map[string]bool{}, 0, 0
	var controllers []string
	for _, e := range events {
		if e.Verb == "get" || e.Verb == "list" || e.Verb == "watch" {
			continue
		}
		roles[role(e.User.Username, nodeUser)] = true
		if e.ObjectRef.Subresource == "status" {
			statusCount++
			if e.User.Username == nodeUser {
				byKubelet++
			}
		}
		if role(e.User.Username, nodeUser) == "kube-controller-manager" {
			controllers = append(controllers, e.Summary())
		}
	}
	writers.Record(writersEvidence{Identities: slices.Sorted(maps.Keys(roles)), Count: len(roles)})
	statusWrites.Record(statusWritesEvidence{Count: statusCount, ByKubelet: byKubelet})
	controllerWrites.Record(controllerWritesEvidence{Count: len(controllers), Requests: controllers})
	ev := auditOrderEvidence{}
	if create != nil && bindingReq != nil {
		ev.CreateBeforeBinding = create.RequestReceivedTimestamp.Before(bindingReq.RequestReceivedTimestamp)
		ev.BindingBeforeFirstStatus = bindingReq.RequestReceivedTimestamp.Before(firstStatus.RequestReceivedTimestamp)
	}
	auditOrder.Record(ev)
}

// role names a requester by role, so that evidence reads the same on
// every cluster.
func role(user, nodeUser string) string {
	switch {
	case user == nodeUser:
		return "kubelet"
	case user == "system:kube-scheduler":
		return "kube-scheduler"
	case strings.HasPrefix(user, "system:serviceaccount:kube-system:") || user == "system:kube-controller-manager":
		return "kube-controller-manager"
	default:
		return "client"
	}
}

func subresource(s string) audit.Match {
	return func(e audit.Event) bool { return e.ObjectRef != nil && (s == "*" || e.ObjectRef.Subresource == s) }
}

func firstEvent(es []audit.Event, ms ...audit.Match) *audit.Event {
	m := audit.All(ms...)
	for i := range es {
		if m(es[i]) {
			return &es[i]
		}
	}
	return nil
}

// kubelet selects requests made by a kubelet.
func kubelet(e audit.Event) bool { return strings.HasPrefix(e.User.Username, "system:node:") }
