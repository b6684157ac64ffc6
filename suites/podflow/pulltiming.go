package podflow

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/onsi/ginkgo/v2"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/freshimage"
	"github.com/kubeproof/kubeproof/kube/observe"
	"github.com/kubeproof/kubeproof/kube/podstate"
)

// How the timing spec's applies go when the image is to be downloaded:
// pod.yaml with an image only the cluster's registry has (package
// freshimage: each apply its own image, whose layer no node has), over the
// registry's full-speed link and, fewer, over its slow one.
const (
	pulledSamples = 5
	shapedSamples = 2
)

// The applies whose image was downloaded from the cluster's registry at
// full speed: the kubelet's step with the download, and the download's
// share of the whole.
type pulledTimingEvidence struct {
	// Link is what lies between the node and the registry.
	Link string `json:"link"`
	// ImageBytes is one image's size as stored (manifest, config,
	// compressed layer): what each apply downloaded.
	ImageBytes int64 `json:"imageBytes"`
	// PullMs is each pull's time as the kubelet's Pulled event says
	// (download and unpacking); RegistryMs the registry's, from its first
	// request for the image to its last answer sent.
	PullMs     framework.Samples `json:"pullMs"`
	RegistryMs framework.Samples `json:"registryMs"`
	// ApplyToReadyMs: from kubectl apply to the Pod Ready.
	ApplyToReadyMs framework.Samples `json:"applyToReadyMs"`
	// BoundToRunningMs: from the binding to the container running.
	BoundToRunningMs framework.Samples `json:"boundToRunningMs"`
	// PullShare: the pull's time over the time from kubectl apply to the
	// Pod Ready.
	PullShare framework.Samples `json:"pullShare"`
}

// The same over the registry's slow link, which sends at most
// RateBytesPerSecond: a download of several seconds.
type shapedPullEvidence struct {
	// Link is the slow link's description; RateBytesPerSecond its rate.
	Link               string `json:"link"`
	RateBytesPerSecond int64  `json:"rateBytesPerSecond"`
	// ImageBytes is one image's size as stored: what each apply
	// downloaded over the slow link.
	ImageBytes int64 `json:"imageBytes"`
	// PullMs, RegistryMs, ApplyToReadyMs and PullShare as over the full-speed
	// link.
	PullMs         framework.Samples `json:"pullMs"`
	RegistryMs     framework.Samples `json:"registryMs"`
	ApplyToReadyMs framework.Samples `json:"applyToReadyMs"`
	PullShare      framework.Samples `json:"pullShare"`
	// Steps ranks the steps of these applies by median.
	Steps pullStepsEvidence `json:"steps"`
}

var (
	pullSteps    = framework.DeclareEvidence[pullStepsEvidence]("pullSteps", specTiming)
	pulledTiming = framework.DeclareEvidence[pulledTimingEvidence]("pulledTiming", specTiming)
	shapedPull   = framework.DeclareEvidence[shapedPullEvidence]("shapedPull", specTiming)
)

// measurePulls applies pod.yaml with images to download: pulledSamples
// times over the registry's full-speed link, shapedSamples times over its
// slow one, each until the Pod is Ready.
func measurePulls(ctx context.Context, f *framework.Framework, pods *observe.Recorder) {
	ginkgo.GinkgoHelper()
	if !f.Has(cluster.RegistryPull) || f.Cluster.PullRegistry == nil {
		why := f.Missing(cluster.RegistryPull)
		if why == "" {
			why = "the cluster's provider names no registry"
		}
		for _, name := range []string{"pullSteps", "pulledTiming", "shapedPull"} {
			framework.ProbeUnobservable(name, "no image could be downloaded: "+why)
		}
		return
	}
	reg := f.Cluster.PullRegistry
	events := f.RecordEvents(ctx)
	ginkgo.By(fmt.Sprintf("kubectl apply -f pod.yaml with an image to download, %d times", pulledSamples))
	full := pullApplies(ctx, f, pods, events, "pulled", pulledSamples, reg.Address)
	ev := pulledTimingEvidence{Link: reg.Link, ImageBytes: full.imageBytes, PullMs: framework.NewSamples(full.pullMs),
		RegistryMs: framework.NewSamples(full.registryMs), ApplyToReadyMs: framework.NewSamples(full.applyToReady),
		BoundToRunningMs: framework.NewSamples(full.boundToRunning), PullShare: framework.NewSamples(full.share)}
	pulledTiming.Record(ev)
	steps, _ := slowestSteps(full.steps)
	pullSteps.Record(steps)

	if reg.Shaped == "" {
		shapedPull.Unobservable("the cluster's registry has no slow link")
		return
	}
	ginkgo.By(fmt.Sprintf("the same over the registry's slow link (%d bytes/s), %d times", reg.ShapedRate, shapedSamples))
	slow := pullApplies(ctx, f, pods, events, "shaped", shapedSamples, reg.Shaped)
	slowSteps, _ := slowestSteps(slow.steps)
	shapedPull.Record(shapedPullEvidence{Link: reg.ShapedLink,
		RateBytesPerSecond: reg.ShapedRate, ImageBytes: slow.imageBytes, PullMs: framework.NewSamples(slow.pullMs),
		RegistryMs: framework.NewSamples(slow.registryMs), ApplyToReadyMs: framework.NewSamples(slow.applyToReady),
		PullShare: framework.NewSamples(slow.share), Steps: slowSteps})
}

// pulledApplies are the samples of applies whose image was downloaded.
type pulledApplies struct {
	steps                                                   []applySteps
	pullMs, registryMs, applyToReady, boundToRunning, share []float64
	imageBytes                                              int64
}

// pullApplies applies pod.yaml n times, each with an image of its own
// pushed to the registry just before and named at addr, and measures each
// until its Pod is Ready. A pull that fails stops the spec: what it
// depends on, the registry, did not serve.
func pullApplies(ctx context.Context, f *framework.Framework, pods, events *observe.Recorder, what string, n int, addr string) pulledApplies {
	ginkgo.GinkgoHelper()
	var out pulledApplies
	for i := range n {
		name := fmt.Sprintf("%s-%s-%d", podName, what, i)
		img := f.FreshImage(ctx, fmt.Sprintf("%s-%d", what, i))
		mark := f.RegistryMark()
		// The pull is awaited before the Pod's start, so that a registry
		// that did not serve stops the spec naming the registry, not the
		// kubelet.
		var pull framework.PullOutcome
		var fetch freshimage.Fetch
		s := applyAndWait(ctx, f, pods, name, img.At(addr), func() {
			pull, fetch = f.AwaitDownload(ctx, events, name, mark, img)
			if pull.Pulled == nil {
				// The registry sent the image: the pull's time is the
				// kubelet's to report, and it did not.
				framework.Unmet("kubelet", "the kubelet reported the image's download in a Pulled event",
					fmt.Sprintf("Pod %s's image %s: %s; the registry sent the node all %d bytes of its blobs", name, img.At(addr), pull.Summary(), fetch.BlobBytes))
			}
		})
		p, ok := podstate.PulledDetails(pull.Pulled.Message)
		if !ok {
			// Another kubelet's or runtime's wording: the pull's time is
			// not shown here, which is no harness bug.
			framework.Unmet("kubelet", "the Pulled event states how long the pull took",
				fmt.Sprintf("Pod %s's Pulled event: %q", name, pull.Pulled.Message))
		}
		s.pulled, s.pullMs = true, framework.Millis(p.Took)
		out.steps = append(out.steps, s)
		out.pullMs = append(out.pullMs, s.pullMs)
		out.registryMs = append(out.registryMs, fetch.Seconds()*1000)
		out.applyToReady = append(out.applyToReady, s.applyToReadyMs())
		out.boundToRunning = append(out.boundToRunning, s.boundToRunningMs)
		out.share = append(out.share, s.pullMs/s.applyToReadyMs())
		out.imageBytes = img.Bytes
	}
	return out
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
