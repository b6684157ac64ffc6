package podflow

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/audit"
	"github.com/kubeproof/kubeproof/kube/podstate"
)

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
	timing       = framework.DeclareEvidence[timingEvidence]("timing", specTiming)
	auditTiming  = framework.DeclareEvidence[auditTimingEvidence]("auditTiming", specTiming)
	pullSteps    = framework.DeclareEvidence[pullStepsEvidence]("pullSteps", specTiming)
	pulledTiming = framework.DeclareEvidence[pulledTimingEvidence]("pulledTiming", specTiming)
)

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
