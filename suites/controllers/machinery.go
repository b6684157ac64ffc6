package controllers

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/onsi/ginkgo/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/audit"
	"github.com/kubeproof/kubeproof/kube/observe"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
)

// The specs of this file: the machinery under the controllers (seed 004).
const (
	specInformers = "controllers-informers"
	specRetry     = "controllers-retry"
)

var _ = ginkgo.Describe("Controller machinery", func() {
	f := framework.New("machinery")

	ginkgo.It("components keep informers: an initial state, then a watch; each kubelet watches its own node's Pods",
		framework.Checks(specInformers, framework.Requires(cluster.AuditLog)),
		func(ctx ginkgo.SpecContext) {
			log, _ := f.AuditLog()
			// From the cluster's start: the components' first requests.
			reads, err := log.Since(0, audit.Verbs("list", "watch"))
			framework.ExpectNoError(err, "read the audit log")
			record := func(ev framework.Evidence[informerEvidence], user, resource string) {
				i := firstRead(reads, user, resource)
				if i.FirstRequest == "" {
					ev.Unobservable("the audit log has no list or watch of %s by %s (it does not reach back to the component's start)", resource, user)
					return
				}
				ev.Record(i)
			}
			record(schedulerInformer, scheduler, "pods")
			record(controllerInformer, controllerManager, "replicasets")

			nodes, err := f.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "!" + framework.SimulatedLabel})
			framework.ExpectNoError(err, "list the nodes")
			kw := kubeletWatchesEvidence{Nodes: len(nodes.Items), AllNodesWatch: len(nodes.Items) > 0}
			for _, n := range nodes.Items {
				user := "system:node:" + n.Name
				watched := slices.ContainsFunc(reads, func(e audit.Event) bool {
					return e.User.Username == user && e.Verb == "watch" && e.ObjectRef != nil && e.ObjectRef.Resource == "pods" &&
						e.Query("fieldSelector") == "spec.nodeName="+n.Name
				})
				if !watched {
					kw.AllNodesWatch = false
					kw.Missing = append(kw.Missing, n.Name)
				}
				if kw.InitialState == "" {
					kw.InitialState = firstRead(reads, user, "pods").InitialState
				}
			}
			kubeletWatches.Record(kw)
		})

	ginkgo.It("a Reconcile that fails is retried, ever more slowly, until it succeeds",
		framework.Checks(specRetry, framework.Requires(cluster.AuditLog)),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.PodsCreated)
			log, from := f.AuditLog()
			quotas := f.Client.CoreV1().ResourceQuotas(f.Namespace)
			_, err := quotas.Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "no-pods"},
				Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}}}, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create a quota of no Pods")
			// The quota is enforced once its controller has counted usage.
			lw := cache.NewFilteredListWatchFromClient(f.Client.CoreV1().RESTClient(), "resourcequotas", f.Namespace, func(o *metav1.ListOptions) {
				o.FieldSelector = observe.NameSelector("no-pods")
			})
			_, err = observe.Until(ctx, framework.Timeout.Controller, "the quota's usage counted", lw, func(q *corev1.ResourceQuota) (bool, error) {
				_, counted := q.Status.Used[corev1.ResourcePods]
				return counted, nil
			}, nil)
			if err != nil {
				framework.Unmet("kube-controller-manager", "the resource quota controller counted the namespace's usage", err.Error())
			}

			pods := f.RecordPods(ctx)
			one := int32(1)
			labels := map[string]string{"app": "refused"}
			_, err = f.Client.AppsV1().ReplicaSets(f.Namespace).Create(ctx, &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Name: "refused"},
				Spec: appsv1.ReplicaSetSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podsecurity.Restricted(corev1.PodSpec{
						Containers: []corev1.Container{{Name: "app", Image: images.TestApp.PodRef()}}})}},
			}, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create the ReplicaSet")

			// The window ends once the intervals between refused creates
			// grow by the rule that decides the claim (growing), or at its
			// limit. The per-item backoff starts at 5 ms and doubles, but on a
			// busy machine the API server paces the first retries (about
			// 200 ms each), and a sync that an event triggers puts a short
			// interval among the long ones: ending at the first one-second
			// interval, as before, judged [246 178 207 122 600 67 338 1275] ms
			// not growing, one doubling short. A controller that retries at
			// one pace, or stops, never satisfies the rule: the window runs to
			// its limit and the intervals seen refute the claim.
			const limit = 30 * time.Second
			refused := audit.All(audit.On("pods", f.Namespace, "", ""), audit.Verbs("create"), audit.By(replicaSetController),
				func(e audit.Event) bool { return e.Code() == 403 })
			begin := time.Now()
			attempts, err := log.WaitFor(ctx, from, limit, "the ReplicaSet controller's refused creates, until their intervals grow fourfold", refused,
				func(es []audit.Event) bool { return growing(intervalsMs(es)) })
			if ctx.Err() != nil {
				framework.ExpectNoError(err, "read the refused creates from the audit log")
			}
			ev := retryEvidence{Attempts: len(attempts), WindowSeconds: math.Round(time.Since(begin).Seconds()*10) / 10, IntervalsMs: intervalsMs(attempts)}
			ev.IntervalsGrow = growing(ev.IntervalsMs)

			ginkgo.By("removing the quota: nothing is done to the ReplicaSet")
			framework.ExpectNoError(quotas.Delete(ctx, "no-pods", metav1.DeleteOptions{}), "delete the quota")
			removed := time.Now()
			events, created := framework.Await(ctx, pods, "a Pod of the ReplicaSet", framework.Timeout.Rollout, func(es []observe.Event) bool {
				return slices.ContainsFunc(es, isRefusedPod)
			})
			ev.RecoveredWithoutChange = created
			if created {
				ev.RecoveredAfterMs = framework.Millis(events[slices.IndexFunc(events, isRefusedPod)].Received.Sub(removed))
			}
			workqueueRetry.Record(ev)
		})
})

// controllerManager is the identity kube-controller-manager's shared
// informers read with (its controllers write with their own accounts).
const controllerManager = "system:kube-controller-manager"

// firstRead is how user first read resource (cluster-wide) in reads: the
// first request the API server accepted.
func firstRead(reads []audit.Event, user, resource string) informerEvidence {
	var ev informerEvidence
	for _, e := range reads {
		if e.User.Username != user || e.ObjectRef == nil || e.ObjectRef.Resource != resource || e.ObjectRef.Namespace != "" {
			continue
		}
		if code := e.Code(); code >= 300 {
			if ev.Refused == "" && ev.FirstRequest == "" {
				ev.Refused = fmt.Sprintf("%s %s: %d", e.Verb, e.RequestURI, code)
			}
			continue
		}
		if ev.FirstRequest == "" {
			ev.FirstRequest = e.Verb + " " + e.RequestURI
			switch {
			case e.Verb == "list":
				ev.InitialState = "list"
			case e.Query("sendInitialEvents") == "true":
				ev.InitialState = "watch-list"
			}
		}
		if e.Verb == "watch" {
			ev.Watches = true
			break
		}
	}
	return ev
}

// intervalsMs are the times between consecutive events, by when the API
// server received them.
func intervalsMs(es []audit.Event) []float64 {
	var ms []float64
	for i := 1; i < len(es); i++ {
		ms = append(ms, framework.Millis(es[i].RequestReceivedTimestamp.Sub(es[i-1].RequestReceivedTimestamp)))
	}
	return ms
}

// growing reports whether the intervals between attempts lengthen: the
// last ones at least four times the first ones (medians of three).
func growing(ms []float64) bool {
	if len(ms) < 6 {
		return false
	}
	median3 := func(v []float64) float64 {
		s := slices.Sorted(slices.Values(v))
		return s[1]
	}
	return median3(ms[len(ms)-3:]) >= 4*median3(ms[:3])
}

// isRefusedPod reports whether e is about a Pod of the ReplicaSet the
// quota refused.
func isRefusedPod(e observe.Event) bool {
	p := framework.PodOf(e)
	return p != nil && p.Labels["app"] == "refused"
}

// Evidence: what the specs above record, under the names the claims files use.

// How one component first read a kind of object, from the audit log since
// the cluster's start.
type informerEvidence struct {
	// InitialState is how the component got the objects that existed:
	// "list" (a LIST request, then a watch) or "watch-list" (a watch that
	// streams them first, sendInitialEvents=true).
	InitialState string `json:"initialState"`
	// Watches: the component watched the resource (cluster-wide) after its
	// first request.
	Watches bool `json:"watches"`
	// FirstRequest is its first successful cluster-wide list or watch of the
	// resource, "verb URI".
	FirstRequest string `json:"firstRequest"`
	// Refused is the first request the API server turned down before that
	// (a watch-list it does not serve, which the client falls back from).
	Refused string `json:"refused,omitempty"`
}

// Every node's kubelet, and the Pods it watches.
type kubeletWatchesEvidence struct {
	// Nodes is how many nodes (with a kubelet) the cluster has.
	Nodes int `json:"nodes"`
	// AllNodesWatch: each node's kubelet watches Pods, filtered to its own
	// node (fieldSelector spec.nodeName=<node>).
	AllNodesWatch bool `json:"allNodesWatch"`
	// Missing are the nodes whose kubelet has no such watch in the audit log.
	Missing []string `json:"missing,omitempty"`
	// InitialState is how the first node's kubelet got its Pods: "list" or
	// "watch-list" (as informerEvidence says).
	InitialState string `json:"initialState"`
}

// A ReplicaSet whose Pods a ResourceQuota refuses, then the quota removed.
type retryEvidence struct {
	// Attempts are the ReplicaSet controller's refused creates within the
	// window; IntervalsMs the time between them.
	Attempts    int       `json:"attempts"`
	IntervalsMs []float64 `json:"intervalsMs"`
	// IntervalsGrow: the last intervals are at least four times the first
	// ones (medians of three).
	IntervalsGrow bool `json:"intervalsGrow"`
	// WindowSeconds is how long the refused creates were read (until they
	// grew so, or 30 s).
	WindowSeconds float64 `json:"windowSeconds"`
	// RecoveredWithoutChange: once the quota was gone, the Pod was created
	// without anything done to the ReplicaSet.
	RecoveredWithoutChange bool `json:"recoveredWithoutChange"`
	// RecoveredAfterMs is the time from the quota's removal to the Pod seen
	// created.
	RecoveredAfterMs float64 `json:"recoveredAfterMs"`
}

var (
	schedulerInformer  = framework.DeclareEvidence[informerEvidence]("schedulerInformer", specInformers)
	controllerInformer = framework.DeclareEvidence[informerEvidence]("controllerInformer", specInformers)
	kubeletWatches     = framework.DeclareEvidence[kubeletWatchesEvidence]("kubeletWatches", specInformers)
	workqueueRetry     = framework.DeclareEvidence[retryEvidence]("workqueueRetry", specRetry)
)
