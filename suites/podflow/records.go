package podflow

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/audit"
	"github.com/kubeproof/kubeproof/framework/etcd"
	"github.com/kubeproof/kubeproof/framework/podstate"
)

// kubectl's create request, from the audit log.
type requestEvidence struct {
	Verb      string `json:"verb"`
	Path      string `json:"path"`
	Code      int    `json:"code"`
	UserAgent string `json:"userAgent"`
	Kubectl   bool   `json:"kubectl"`
}

// The binding request, from the audit log.
type bindingEvidence struct {
	Verb        string `json:"verb"`
	Subresource string `json:"subresource"`
	User        string `json:"user"`
	Code        int    `json:"code"`
	Path        string `json:"path"`
}

// A component's watch of Pods, from the audit log.
type watchEvidence struct {
	Found         bool   `json:"found"`
	FieldSelector string `json:"fieldSelector"`
	Path          string `json:"path"`
}

// Who wrote to the Pod, by role.
type writersEvidence struct {
	Identities []string `json:"identities"`
	Count      int      `json:"count"`
}

type statusWritesEvidence struct {
	Count     int `json:"count"`
	ByKubelet int `json:"byKubelet"`
}

type controllerWritesEvidence struct {
	Count    int      `json:"count"`
	Requests []string `json:"requests"`
}

// The order of the requests, arrival to arrival.
type auditOrderEvidence struct {
	CreateBeforeBinding      bool `json:"createBeforeBinding"`
	BindingBeforeFirstStatus bool `json:"bindingBeforeFirstStatus"`
}

// The Pod as etcd holds it once created.
type etcdEvidence struct {
	Exists   bool   `json:"exists"`
	Key      string `json:"key"`
	Encoding string `json:"encoding"`
}

// The Pod's status as etcd holds it once the Pod is Ready.
type etcdFinalEvidence struct {
	StoredPhase string `json:"storedPhase"`
	StoredReady bool   `json:"storedReady"`
	// NodeNameStored: etcd's copy names the node the Pod is bound to (the
	// one the API server reports).
	NodeNameStored bool   `json:"nodeNameStored"`
	StoredNodeName string `json:"storedNodeName"`
}

// Every key etcd holds, and those outside /registry/; of those, the ones
// that hold a Kubernetes object (the API server also keeps bookkeeping of
// its own there, such as compact_rev_key, its last compaction).
type etcdKeysEvidence struct {
	Total             int      `json:"total"`
	OutsideRegistry   int      `json:"outsideRegistry"`
	ExamplesOutside   []string `json:"examplesOutside"`
	ResourcesOutside  int      `json:"resourcesOutside"`
	ResourceKeysFound []string `json:"resourceKeysOutside,omitempty"`
}

// How often a Ready Pod's status was written in an observation window.
type statusWindowEvidence struct {
	WindowSeconds     float64 `json:"windowSeconds"`
	PodUpdates        int     `json:"podUpdates"`
	NodeLeaseRenewals int     `json:"nodeLeaseRenewals"`
}

// What kubectl delete did to the Pod.
type deletedEvidence struct {
	DeletionEventSeen bool `json:"deletionEventSeen"`
	GracefulMark      bool `json:"gracefulMark"`
	// RunningWhenRemoved counts the containers still running in the last
	// state the watch saw before the object went (unset if it saw none).
	RunningWhenRemoved    *int    `json:"runningWhenRemoved,omitempty"`
	NotFoundAfter         bool    `json:"notFoundAfter"`
	DeleteToRemovedMs     float64 `json:"deleteToRemovedMs"`
	LastStateBeforeRemove string  `json:"lastStateBeforeRemove"`
}

// The same manifest applied again.
type reappliedEvidence struct {
	Ready          bool    `json:"ready"`
	NewObject      bool    `json:"newObject"`
	ApplyToReadyMs float64 `json:"applyToReadyMs"`
	LastSeen       string  `json:"lastSeen"`
}

// Each step's time over several applies, as the watch and kubectl saw them.
type timingEvidence struct {
	ApplyMs          framework.Samples `json:"applyMs"`
	BoundToRunningMs framework.Samples `json:"boundToRunningMs"`
	ApplyToReadyMs   framework.Samples `json:"applyToReadyMs"`
	// PullMs are the image pulls the kubelet reported (none when the
	// image is on the node already).
	PullMs framework.Samples `json:"pullMs"`
	// PulledApplyToReadyMs: ApplyToReadyMs of the applies whose Pod
	// pulled its image (a Pulling event).
	PulledApplyToReadyMs framework.Samples `json:"pulledApplyToReadyMs"`
}

// The steps of the applies that pulled their image, ranked by median: is
// the download the slowest step?
type pullStepsEvidence struct {
	// Slowest is the step whose median took longest, SlowestMs that
	// median; Next and NextMs the step after it.
	Slowest   string  `json:"slowest"`
	SlowestMs float64 `json:"slowestMs"`
	Next      string  `json:"next"`
	NextMs    float64 `json:"nextMs"`
	// StepsMs is each step's median; N how many applies pulled.
	StepsMs map[string]float64 `json:"stepsMs"`
	N       int                `json:"n"`
}

// The steps of one apply, as kubectl and the watch saw them.
type applySteps struct {
	applyMs, toBoundMs, boundToRunningMs, runningToReadyMs float64
	// pullMs is the image pull's time (the Pulled event's), inside
	// boundToRunningMs, when the apply pulled.
	pullMs float64
	pulled bool
}

// The steps between `kubectl apply` and a Ready Pod, as the document's
// table lists them (the API server's answer, the scheduler's choice, the
// download, the container's creation); readiness is one more.
const (
	stepApply     = "kubectl apply (the API server's answer)"
	stepSchedule  = "from kubectl's answer to the binding"
	stepPull      = "image pull"
	stepContainer = "the container's creation and start (bound to running, the pull aside)"
	stepReady     = "running to Ready"
)

// slowestSteps ranks the steps of the applies that pulled by their
// medians; ok is false when none pulled.
func slowestSteps(applies []applySteps) (pullStepsEvidence, bool) {
	byStep := map[string][]float64{}
	n := 0
	for _, a := range applies {
		if !a.pulled {
			continue
		}
		n++
		byStep[stepApply] = append(byStep[stepApply], a.applyMs)
		byStep[stepSchedule] = append(byStep[stepSchedule], max(a.toBoundMs, 0))
		byStep[stepPull] = append(byStep[stepPull], a.pullMs)
		byStep[stepContainer] = append(byStep[stepContainer], max(a.boundToRunningMs-a.pullMs, 0))
		byStep[stepReady] = append(byStep[stepReady], a.runningToReadyMs)
	}
	if n == 0 {
		return pullStepsEvidence{}, false
	}
	ev := pullStepsEvidence{StepsMs: map[string]float64{}, N: n}
	names := slices.Sorted(maps.Keys(byStep))
	for _, name := range names {
		ev.StepsMs[name] = *framework.NewSamples(byStep[name]).Median
	}
	slices.SortStableFunc(names, func(a, b string) int { return cmp.Compare(ev.StepsMs[b], ev.StepsMs[a]) })
	ev.Slowest, ev.SlowestMs = names[0], ev.StepsMs[names[0]]
	ev.Next, ev.NextMs = names[1], ev.StepsMs[names[1]]
	return ev, true
}

// Each step's time over several applies, from the audit log.
type auditTimingEvidence struct {
	CreateRequestMs         framework.Samples `json:"createRequestMs"`
	CreateToBindingMs       framework.Samples `json:"createToBindingMs"`
	BindingToKubeletFirstMs framework.Samples `json:"bindingToKubeletFirstMs"`
	// CreateShareOfApply is, per apply, the create request's time in the
	// API server over kubectl apply's run time: how much of what `time
	// kubectl apply` shows is the API server's answer.
	CreateShareOfApply framework.Samples `json:"createShareOfApply"`
}

// The applies whose Pod pulled its image (a Pulling event): the kubelet's
// step with the download, and the download's share of the whole.
type pulledTimingEvidence struct {
	// BoundToRunningMs: from the binding to the container running.
	BoundToRunningMs framework.Samples `json:"boundToRunningMs"`
	// PullShare: the pull's time (its Pulled event's) over the time from
	// kubectl apply to the Pod Ready.
	PullShare framework.Samples `json:"pullShare"`
}

var (
	request          = framework.DeclareEvidence[requestEvidence]("request", specCreate)
	binding          = framework.DeclareEvidence[bindingEvidence]("binding", specCreate)
	schedulerWatch   = framework.DeclareEvidence[watchEvidence]("schedulerWatch", specCreate)
	kubeletWatch     = framework.DeclareEvidence[watchEvidence]("kubeletWatch", specCreate)
	writers          = framework.DeclareEvidence[writersEvidence]("writers", specCreate)
	statusWrites     = framework.DeclareEvidence[statusWritesEvidence]("statusWrites", specCreate)
	controllerWrites = framework.DeclareEvidence[controllerWritesEvidence]("controllerWrites", specCreate)
	auditOrder       = framework.DeclareEvidence[auditOrderEvidence]("auditOrder", specCreate)
	etcdPod          = framework.DeclareEvidence[etcdEvidence]("etcd", specCreate)
	etcdKeys         = framework.DeclareEvidence[etcdKeysEvidence]("etcdKeys", specCreate)
	etcdFinal        = framework.DeclareEvidence[etcdFinalEvidence]("etcdFinal", specCreate)
	statusWindow     = framework.DeclareEvidence[statusWindowEvidence]("statusWindow", specStatusWindow)
	deleted          = framework.DeclareEvidence[deletedEvidence]("deleted", specDelete)
	reapplied        = framework.DeclareEvidence[reappliedEvidence]("reapplied", specDelete)
	timing           = framework.DeclareEvidence[timingEvidence]("timing", specTiming)
	auditTiming      = framework.DeclareEvidence[auditTimingEvidence]("auditTiming", specTiming)
	pullSteps        = framework.DeclareEvidence[pullStepsEvidence]("pullSteps", specTiming)
	pulledTiming     = framework.DeclareEvidence[pulledTimingEvidence]("pulledTiming", specTiming)
)

// recordSchedulerWatch reads the scheduler's watch of Pods from the audit
// log: it began when the scheduler started, long before the spec.
func recordSchedulerWatch(log *audit.Log) {
	ginkgo.GinkgoHelper()
	watches, err := podWatches(log)
	framework.ExpectNoError(err, "read the pod watches from the audit log")
	schedulerWatch.Record(watchOf(watches, "system:kube-scheduler"))
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

// recordEtcdEvidence reads the new Pod as etcd holds it (key, encoding) and
// every key etcd holds.
func recordEtcdEvidence(ctx context.Context, f *framework.Framework, db *etcd.Client) {
	ginkgo.GinkgoHelper()
	ginkgo.By("reading the Pod from etcd")
	key := "/registry/pods/" + f.Namespace + "/" + podName
	kv, found, err := db.Get(ctx, key)
	framework.ExpectNoError(err, "read %s from etcd", key)
	ev := etcdEvidence{Exists: found, Key: f.Generalize(key, map[string]string{podName: "{name}"})}
	if found {
		ev.Encoding = kv.Encoding()
	}
	etcdPod.Record(ev)
	allKeys, _, err := db.Keys(ctx, "")
	framework.ExpectNoError(err, "list etcd keys")
	var outside, resources []string
	for _, k := range allKeys {
		if strings.HasPrefix(k, "/registry/") {
			continue
		}
		outside = append(outside, k)
		kv, found, err := db.Get(ctx, k)
		framework.ExpectNoError(err, "read %s from etcd", k)
		if found && holdsObject(kv) {
			resources = append(resources, k)
		}
	}
	etcdKeys.Record(etcdKeysEvidence{Total: len(allKeys), OutsideRegistry: len(outside), ExamplesOutside: outside[:min(len(outside), 5)],
		ResourcesOutside: len(resources), ResourceKeysFound: resources[:min(len(resources), 5)]})
}

// holdsObject reports whether a stored value is a Kubernetes object: the
// API server's protobuf envelope, or JSON with an apiVersion and a kind.
func holdsObject(kv etcd.KeyValue) bool {
	if kv.Encoding() == "protobuf" {
		return true
	}
	var typed struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	return json.Unmarshal(kv.Value, &typed) == nil && typed.APIVersion != "" && typed.Kind != ""
}

// recordEtcdFinal reads the status the kubelet reported, decoded from the
// bytes etcd holds.
func recordEtcdFinal(ctx context.Context, f *framework.Framework, db *etcd.Client) {
	ginkgo.GinkgoHelper()
	key := "/registry/pods/" + f.Namespace + "/" + podName
	kv, found, err := db.Get(ctx, key)
	framework.ExpectNoError(err, "read %s from etcd", key)
	if !found {
		// Not where the API server stores Pods by default (an API server
		// with another --etcd-prefix): etcd holds none of its state here.
		etcdFinal.Record(etcdFinalEvidence{})
		return
	}
	obj, err := etcd.Decode(kv.Value)
	framework.ExpectNoError(err, "decode %s", key)
	p, ok := obj.(*corev1.Pod)
	gomega.Expect(ok).To(gomega.BeTrue(), "%s holds a %T", key, obj)
	served, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, podName, metav1.GetOptions{})
	framework.ExpectNoError(err, "read the Pod from the API server")
	etcdFinal.Record(etcdFinalEvidence{StoredPhase: string(p.Status.Phase), StoredReady: framework.PodReady(p),
		StoredNodeName: p.Spec.NodeName,
		NodeNameStored: p.Spec.NodeName != "" && p.Spec.NodeName == served.Spec.NodeName})
}

// timingSamples is how often the timing spec applies pod.yaml.
const timingSamples = 5

// measureTimings applies pod.yaml (under new names) timingSamples times,
// one after the other, each until its Pod is Ready, and records every
// step's median and spread: one sample on a loaded machine says little.
func measureTimings(ctx context.Context, f *framework.Framework) {
	ginkgo.GinkgoHelper()
	auditLog, from := f.AuditLog()
	pods := f.RecordPods(ctx)
	podEvents := f.RecordEvents(ctx)
	var applyMs, boundToRunning, applyToReady []float64
	names := make([]string, timingSamples)
	steps := make([]applySteps, timingSamples)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", podName, i)
		a := apply(ctx, f, names[i])
		b := framework.BoundPod(ctx, pods, names[i])
		r := framework.RunningPod(ctx, pods, names[i])
		rd := framework.ReadyPod(ctx, pods, names[i])
		applyMs = append(applyMs, a.ms)
		boundToRunning = append(boundToRunning, framework.Millis(r.At.Sub(b.At)))
		applyToReady = append(applyToReady, framework.Millis(rd.At.Sub(a.began)))
		steps[i] = applySteps{applyMs: a.ms, toBoundMs: framework.Millis(b.At.Sub(a.began)) - a.ms,
			boundToRunningMs: framework.Millis(r.At.Sub(b.At)), runningToReadyMs: framework.Millis(rd.At.Sub(r.At))}
	}
	var pulls, pulledApplyToReady []float64
	pulled := map[string]bool{}
	pullOf := map[string]float64{}
	for _, e := range podEvents.Events() {
		ev, ok := e.Object.(*corev1.Event)
		if !ok {
			continue
		}
		switch ev.Reason {
		case "Pulled":
			if d, ok := podstate.PullDuration(ev.Message); ok {
				pulls = append(pulls, framework.Millis(d))
				if i := slices.Index(names, ev.InvolvedObject.Name); i >= 0 {
					steps[i].pullMs, steps[i].pulled = framework.Millis(d), true
				}
				pullOf[ev.InvolvedObject.Name] = framework.Millis(d)
			}
		case "Pulling":
			pulled[ev.InvolvedObject.Name] = true
		}
	}
	for i, name := range names {
		if pulled[name] {
			pulledApplyToReady = append(pulledApplyToReady, applyToReady[i])
		}
	}
	timing.Record(timingEvidence{ApplyMs: framework.NewSamples(applyMs), BoundToRunningMs: framework.NewSamples(boundToRunning),
		ApplyToReadyMs: framework.NewSamples(applyToReady), PullMs: framework.NewSamples(pulls),
		PulledApplyToReadyMs: framework.NewSamples(pulledApplyToReady)})
	if ev, ok := slowestSteps(steps); ok {
		pullSteps.Record(ev)
	} else {
		pullSteps.Unobservable("no apply pulled its image (it was on the node already): there is no pull to rank among the steps")
	}
	var pulledBoundToRunning, pullShares []float64
	for i, name := range names {
		if pull, ok := pullOf[name]; ok && pulled[name] {
			pulledBoundToRunning = append(pulledBoundToRunning, boundToRunning[i])
			pullShares = append(pullShares, pull/applyToReady[i])
		}
	}
	if len(pullShares) == 0 {
		pulledTiming.Unobservable("no apply pulled its image (it was on the node already): nothing was downloaded")
	} else {
		pulledTiming.Record(pulledTimingEvidence{BoundToRunningMs: framework.NewSamples(pulledBoundToRunning), PullShare: framework.NewSamples(pullShares)})
	}
	if auditLog == nil {
		return
	}
	ginkgo.By("reading each apply's requests from the audit log")
	events, err := auditLog.WaitFor(ctx, from, framework.Timeout.Audit, "every Pod's first status write by its kubelet", audit.InNamespace(f.Namespace), func(es []audit.Event) bool {
		for _, n := range names {
			if firstEvent(es, audit.On("pods", f.Namespace, n, "status"), kubelet) == nil {
				return false
			}
		}
		return true
	})
	framework.ExpectNoError(err, "read the applies from the audit log")
	var createMs, toBinding, toKubelet, share []float64
	for i, n := range names {
		c := firstEvent(events, audit.On("pods", f.Namespace, n, ""), audit.Verbs("create"))
		b := firstEvent(events, audit.On("pods", f.Namespace, n, "binding"))
		s := firstEvent(events, audit.On("pods", f.Namespace, n, "status"), kubelet)
		if c == nil || b == nil {
			ginkgo.Fail(fmt.Sprintf("the audit log lacks the create or the binding of Pod %s", n))
		}
		createMs = append(createMs, framework.Millis(c.StageTimestamp.Sub(c.RequestReceivedTimestamp)))
		toBinding = append(toBinding, framework.Millis(b.RequestReceivedTimestamp.Sub(c.RequestReceivedTimestamp)))
		toKubelet = append(toKubelet, framework.Millis(s.RequestReceivedTimestamp.Sub(b.RequestReceivedTimestamp)))
		share = append(share, createMs[i]/applyMs[i])
	}
	auditTiming.Record(auditTimingEvidence{CreateRequestMs: framework.NewSamples(createMs),
		CreateToBindingMs: framework.NewSamples(toBinding), BindingToKubeletFirstMs: framework.NewSamples(toKubelet),
		CreateShareOfApply: framework.NewSamples(share)})
}

// kubelet selects requests made by a kubelet.
func kubelet(e audit.Event) bool { return strings.HasPrefix(e.User.Username, "system:node:") }
