package podflow

import (
	"context"
	"fmt"

	"github.com/onsi/ginkgo/v2"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/audit"
	"github.com/kubeproof/kubeproof/kube/observe"
)

// Each step's time over several applies of pod.yaml, whose image the node
// has (it is loaded into the node), as the watch and kubectl saw them.
type timingEvidence struct {
	ApplyMs          framework.Samples `json:"applyMs"`
	BoundToRunningMs framework.Samples `json:"boundToRunningMs"`
	ApplyToReadyMs   framework.Samples `json:"applyToReadyMs"`
}

// The steps of one apply, as kubectl and the watch saw them.
type applySteps struct {
	applyMs, toBoundMs, boundToRunningMs, runningToReadyMs float64
	// pullMs is the image pull's time (the Pulled event's), inside
	// boundToRunningMs, when the apply pulled.
	pullMs float64
	pulled bool
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

var (
	timing      = framework.DeclareEvidence[timingEvidence]("timing", specTiming)
	auditTiming = framework.DeclareEvidence[auditTimingEvidence]("auditTiming", specTiming)
)

// timingSamples is how often the timing spec applies pod.yaml.
const timingSamples = 5

// measureTimings applies pod.yaml (under new names) timingSamples times,
// one after the other, each until its Pod is Ready, and records every
// step's median and spread: one sample on a loaded machine says little.
// Then it does the same with images only the cluster's registry has
// (measurePulls).
func measureTimings(ctx context.Context, f *framework.Framework) {
	ginkgo.GinkgoHelper()
	auditLog, from := f.AuditLog()
	pods := f.RecordPods(ctx)
	var applyMs, boundToRunning, applyToReady []float64
	names := make([]string, timingSamples)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", podName, i)
		s := applyAndWait(ctx, f, pods, names[i], "", nil)
		applyMs = append(applyMs, s.applyMs)
		boundToRunning = append(boundToRunning, s.boundToRunningMs)
		applyToReady = append(applyToReady, s.applyToReadyMs())
	}
	timing.Record(timingEvidence{ApplyMs: framework.NewSamples(applyMs), BoundToRunningMs: framework.NewSamples(boundToRunning),
		ApplyToReadyMs: framework.NewSamples(applyToReady)})
	if auditLog != nil {
		recordAuditTiming(ctx, f, auditLog, from, names, applyMs)
	}
	measurePulls(ctx, f, pods)
}

// applyAndWait applies pod.yaml as name (with image, if not ""), waits
// until its Pod is Ready and returns its steps' times. bound, if not nil,
// runs once the Pod is bound (to see its image pulled first).
func applyAndWait(ctx context.Context, f *framework.Framework, pods *observe.Recorder, name, image string, bound func()) applySteps {
	ginkgo.GinkgoHelper()
	a := applyImage(ctx, f, name, image)
	b := framework.BoundPod(ctx, pods, name)
	if bound != nil {
		bound()
	}
	r := framework.RunningPod(ctx, pods, name)
	rd := framework.ReadyPod(ctx, pods, name)
	return applySteps{applyMs: a.ms, toBoundMs: framework.Millis(b.At.Sub(a.began)) - a.ms,
		boundToRunningMs: framework.Millis(r.At.Sub(b.At)), runningToReadyMs: framework.Millis(rd.At.Sub(r.At))}
}

// applyToReadyMs is the time from kubectl apply's start to the Pod Ready.
func (a applySteps) applyToReadyMs() float64 {
	return a.applyMs + a.toBoundMs + a.boundToRunningMs + a.runningToReadyMs
}

// recordAuditTiming reads each apply's requests from the audit log.
func recordAuditTiming(ctx context.Context, f *framework.Framework, auditLog *audit.Log, from audit.Offset, names []string, applyMs []float64) {
	ginkgo.GinkgoHelper()
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
