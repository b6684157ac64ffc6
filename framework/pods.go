package framework

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeproof/kubeproof/contract/testapp"
	"github.com/kubeproof/kubeproof/kube/observe"
	"github.com/kubeproof/kubeproof/kube/podstate"
)

// RecordPods records every Pod event in the spec's namespace from now on,
// until the spec ends.
func (f *Framework) RecordPods(ctx context.Context) *observe.Recorder {
	return f.Record(ctx, "pods in "+f.Namespace,
		cache.NewListWatchFromClient(f.Client.CoreV1().RESTClient(), "pods", f.Namespace, fields.Everything()))
}

// Record starts a Recorder of lw, stopped when the spec ends.
func (f *Framework) Record(ctx context.Context, what string, lw cache.ListerWatcherWithContext) *observe.Recorder {
	ginkgo.GinkgoHelper()
	rec, err := observe.Record(ctx, lw)
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "watch %s", what)
	ginkgo.DeferCleanup(rec.Stop)
	return rec
}

// PodOf returns the Pod of an event (nil for other objects).
func PodOf(e observe.Event) *corev1.Pod {
	p, _ := e.Object.(*corev1.Pod)
	return p
}

// FirstPodEvent returns the index of the first event whose Pod satisfies
// match, or -1.
func FirstPodEvent(events []observe.Event, match func(observe.Event, *corev1.Pod) bool) int {
	for i, e := range events {
		if p := PodOf(e); p != nil && match(e, p) {
			return i
		}
	}
	return -1
}

// PodCondition returns the Pod's condition of type t, or nil.
func PodCondition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	return podstate.Condition(p.Status.Conditions, t)
}

// PodReady reports whether the Pod's Ready condition is True.
func PodReady(p *corev1.Pod) bool { return podstate.Ready(p) }

// DescribePod renders the parts of a Pod's state the flow goes through.
func DescribePod(p *corev1.Pod) string {
	var conds []string
	for _, c := range p.Status.Conditions {
		s := fmt.Sprintf("%s=%s", c.Type, c.Status)
		if c.Reason != "" {
			s += "(" + c.Reason + ")"
		}
		if c.Status == corev1.ConditionFalse && c.Message != "" && c.Type == corev1.PodScheduled {
			s += ": " + c.Message
		}
		conds = append(conds, s)
	}
	var containers []string
	for _, cs := range p.Status.ContainerStatuses {
		state := "unknown"
		switch {
		case cs.State.Running != nil:
			state = "running"
		case cs.State.Waiting != nil:
			state = "waiting:" + cs.State.Waiting.Reason
		case cs.State.Terminated != nil:
			state = "terminated:" + cs.State.Terminated.Reason
		}
		containers = append(containers, fmt.Sprintf("%s %s ready=%t restarts=%d", cs.Name, state, cs.Ready, cs.RestartCount))
	}
	node := p.Spec.NodeName
	if node == "" {
		node = "<none>"
	}
	return fmt.Sprintf("pod %s/%s rv=%s phase=%s node=%s conditions=[%s] containers=[%s]",
		p.Namespace, p.Name, p.ResourceVersion, p.Status.Phase, node, strings.Join(conds, " "), strings.Join(containers, "; "))
}

// DescribePodEvent renders an event for wait errors.
func DescribePodEvent(e observe.Event) string {
	if p := PodOf(e); p != nil {
		return string(e.Type) + " " + DescribePod(p)
	}
	return fmt.Sprintf("%s %T", e.Type, e.Object)
}

// Seen is what a bounded wait on a recorder saw: whether its condition
// held within the window, the event that made it hold (or the last one),
// and every event so far.
type Seen struct {
	OK bool
	// Index is the event that made the condition hold (-1 if none did).
	Index int
	// At is when this process received that event (or the last one).
	At     time.Time
	Events []observe.Event
	// Pod is the named Pod in that event (or as last seen; nil if never).
	Pod *corev1.Pod
}

// AwaitPod watches the named Pod through rec until cond holds or window
// passes. It never fails the spec: what was (not) seen is the answer, for
// the caller to record as evidence before deciding what else can be done.
func AwaitPod(ctx context.Context, rec *observe.Recorder, name, what string, window time.Duration, cond func(*corev1.Pod) bool) Seen {
	ginkgo.GinkgoHelper()
	match := func(e observe.Event) bool {
		p := PodOf(e)
		return p != nil && p.Name == name && cond(p)
	}
	events, err := rec.WaitFor(ctx, window, what, func(es []observe.Event) bool {
		return slices.IndexFunc(es, match) >= 0
	}, nil)
	if err != nil && ctx.Err() != nil {
		ginkgo.Fail(fmt.Sprintf("interrupted while waiting for %s", what))
	}
	s := Seen{Index: slices.IndexFunc(events, match), Events: events}
	s.OK = s.Index >= 0
	if s.OK {
		s.Pod, s.At = PodOf(events[s.Index]), events[s.Index].Received
		return s
	}
	for i := len(events) - 1; i >= 0; i-- {
		if p := PodOf(events[i]); p != nil && p.Name == name {
			s.Pod, s.At = p, events[i].Received
			break
		}
	}
	return s
}

// LastSeen describes the Pod as a wait last saw it.
func (s Seen) LastSeen() string {
	if s.Pod == nil {
		return "no event about the Pod"
	}
	return DescribePod(s.Pod)
}

// BoundPod waits for the scheduler to bind the named Pod. If it is not
// bound within Timeout.Bind the spec stops: what depends on it is not
// checkable (record what the claims about the scheduler need first).
func BoundPod(ctx context.Context, rec *observe.Recorder, name string) Seen {
	ginkgo.GinkgoHelper()
	s := AwaitPod(ctx, rec, name, "Pod "+name+" to be bound to a node", Timeout.Bind, func(p *corev1.Pod) bool { return p.Spec.NodeName != "" })
	if !s.OK {
		Unmet("kube-scheduler", "Pod "+name+" was bound to a node", fmt.Sprintf("not bound within %s; last seen: %s", Timeout.Bind, s.LastSeen()))
	}
	Saw("kube-scheduler", "bound a Pod to a node")
	return s
}

// RunningPod waits until every container of the named Pod runs. A Pod whose
// image cannot be pulled, or whose containers do not run within
// Timeout.PodStart, stops the spec, saying which.
func RunningPod(ctx context.Context, rec *observe.Recorder, name string) Seen {
	ginkgo.GinkgoHelper()
	return kubeletStep(ctx, rec, name, "the containers of Pod "+name+" to run", "the containers of Pod "+name+" were started",
		"started a Pod's containers", func(p *corev1.Pod) bool {
			return podstate.AllRunning(p.Status.ContainerStatuses, len(p.Spec.Containers))
		})
}

// ReadyPod waits until the named Pod is Ready. It stops the spec as
// RunningPod does, and when a running Pod does not turn Ready within
// Timeout.PodStart.
func ReadyPod(ctx context.Context, rec *observe.Recorder, name string) Seen {
	ginkgo.GinkgoHelper()
	return kubeletStep(ctx, rec, name, "Pod "+name+" to be Ready", "Pod "+name+" turned Ready", "reported a Pod Ready", PodReady)
}

// kubeletStep waits, for at most Timeout.PodStart, until done holds for the
// named Pod, ending early when the Pod is stuck (its image cannot be had, a
// container keeps failing). Either failure stops the spec on an unmet
// precondition of the kubelet (what), saying which; success notes saw.
func kubeletStep(ctx context.Context, rec *observe.Recorder, name, awaited, what, saw string, done func(*corev1.Pod) bool) Seen {
	ginkgo.GinkgoHelper()
	var stuck string
	s := AwaitPod(ctx, rec, name, awaited, Timeout.PodStart, func(p *corev1.Pod) bool {
		if r := podstate.StuckReason(p); r != "" {
			stuck = r
			return true
		}
		return done(p)
	})
	switch {
	case stuck != "":
		Unmet("kubelet", what, StuckDetail(s.Pod, stuck))
	case !s.OK:
		Unmet("kubelet", what, fmt.Sprintf("waited %s for %s; last seen: %s", Timeout.PodStart, awaited, s.LastSeen()))
	}
	Saw("kubelet", saw)
	return s
}

// StuckDetail says why a Pod is stuck, with how to get our images to the
// nodes when that is why.
func StuckDetail(p *corev1.Pod, reason string) string {
	if p != nil && podstate.ImageUnavailable(p) {
		return reason + "; " + imageHint()
	}
	return reason
}

// Await waits on rec, for at most window, until pred holds for the events
// so far. It never fails the spec: ok says whether pred held.
func Await(ctx context.Context, rec *observe.Recorder, what string, window time.Duration, pred func([]observe.Event) bool) ([]observe.Event, bool) {
	ginkgo.GinkgoHelper()
	events, err := rec.WaitFor(ctx, window, what, pred, nil)
	if err != nil && ctx.Err() != nil {
		ginkgo.Fail(fmt.Sprintf("interrupted while waiting for %s", what))
	}
	return events, err == nil
}

// RecordEvents records every Event (core/v1) in the spec's namespace from
// now on, until the spec ends.
func (f *Framework) RecordEvents(ctx context.Context) *observe.Recorder {
	return f.Record(ctx, "events in "+f.Namespace,
		cache.NewListWatchFromClient(f.Client.CoreV1().RESTClient(), "events", f.Namespace, fields.Everything()))
}

// EventReasons returns, in the order received, the reasons of the events
// about the named object (first occurrence of each).
func EventReasons(events []observe.Event, name string) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range events {
		ev, ok := e.Object.(*corev1.Event)
		if !ok || ev.InvolvedObject.Name != name || seen[ev.Reason] {
			continue
		}
		seen[ev.Reason] = true
		out = append(out, ev.Reason)
	}
	return out
}

// FindEvent returns the first event about name with reason, or nil.
func FindEvent(events []observe.Event, name, reason string) *corev1.Event {
	for _, e := range events {
		if ev, ok := e.Object.(*corev1.Event); ok && ev.InvolvedObject.Name == name && ev.Reason == reason {
			return ev
		}
	}
	return nil
}

// RecordLease records the events of a node's Lease (kube-node-lease), which
// the kubelet renews to say it is alive.
func (f *Framework) RecordLease(ctx context.Context, node string) *observe.Recorder {
	return f.Record(ctx, "the Lease of node "+node, cache.NewListWatchFromClient(f.Client.CoordinationV1().RESTClient(),
		"leases", "kube-node-lease", fields.OneTermEqualSelector("metadata.name", node)))
}

// Fetch runs the test app's HTTP client inside a Pod's container (through
// kubectl exec, as a user would): count requests to url.
func (f *Framework) Fetch(ctx context.Context, pod, container, url string, count int) testapp.FetchResult {
	ginkgo.GinkgoHelper()
	out, err := f.TryFetch(ctx, pod, container, url, count)
	ExpectNoError(err, "fetch %s from Pod %s", url, pod)
	return out
}

// TryFetch is Fetch for a poll: a fetch that could not run (the poll's
// window ended while kubectl exec ran) is an error to try again, not a
// failed spec.
func (f *Framework) TryFetch(ctx context.Context, pod, container, url string, count int) (testapp.FetchResult, error) {
	var out testapp.FetchResult
	args := []string{"exec", pod, "--namespace", f.Namespace}
	if container != "" {
		args = append(args, "-c", container)
	}
	args = append(args, "--", "/kubeproof-testapp", "fetch", "--count", fmt.Sprint(count), "--timeout", "2s", url)
	res, err := f.Kubectl.Run(ctx, nil, args...)
	if err != nil {
		return out, fmt.Errorf("run kubectl exec: %w", err)
	}
	if res.ExitCode != 0 {
		return out, fmt.Errorf("%s", res.String())
	}
	if err := json.Unmarshal([]byte(res.Stdout), &out); err != nil {
		return out, fmt.Errorf("decode the fetch result %q: %w", res.Stdout, err)
	}
	return out, nil
}

// ObserveFor lets window pass while the spec's recorders keep recording. It
// is an observation window (how often something happens, or that it does
// not), never a wait for a condition: use WaitFor and Until for those.
func ObserveFor(ctx context.Context, window time.Duration) {
	ginkgo.GinkgoHelper()
	select {
	case <-time.After(window):
	case <-ctx.Done():
		ginkgo.Fail("interrupted during the observation window")
	}
}

// BindingReports reads from events the Events in which a scheduler reports
// binding one of pods (reason Scheduled, action Binding): the names the
// reporters give themselves (reportingController, else source.component;
// sorted, each once) and how many of pods such an Event names. A name is
// the scheduler's own word, not the user the API server authenticated.
func BindingReports(events []observe.Event, pods ...string) (by []string, named int) {
	by = []string{}
	seen := map[string]bool{}
	for _, e := range events {
		v, ok := e.Object.(*corev1.Event)
		if !ok || v.InvolvedObject.Kind != "Pod" || !slices.Contains(pods, v.InvolvedObject.Name) || v.Reason != "Scheduled" || v.Action != "Binding" {
			continue
		}
		if name := cmp.Or(v.ReportingController, v.Source.Component); !slices.Contains(by, name) {
			by = append(by, name)
		}
		seen[v.InvolvedObject.Name] = true
	}
	slices.Sort(by)
	return by, len(seen)
}

// SchedulerSays is the scheduler's latest word on why a Pod of events is
// not bound: the message of its PodScheduled condition when False ("0/1
// nodes are available: 1 node(s) had untolerated taint ..."), or "".
func SchedulerSays(events []observe.Event) string {
	for i := len(events) - 1; i >= 0; i-- {
		p, ok := events[i].Object.(*corev1.Pod)
		if !ok || p.Spec.NodeName != "" {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Message != "" {
				return "Pod " + p.Name + ": " + c.Message
			}
		}
	}
	return ""
}
