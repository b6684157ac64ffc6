package kubelet

import (
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/freshimage"
	"github.com/kubeproof/kubeproof/kube/observe"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
	"github.com/kubeproof/kubeproof/kube/podstate"
)

const specPull = "kubelet-pull"

var _ = ginkgo.Describe("Kubelet image pulls", func() {
	f := framework.New("kubelet-pull")

	ginkgo.It("pulls an image only the cluster's registry has (Pulling, Pulled, its time); IfNotPresent then uses it, Always asks the registry again",
		framework.Checks(specPull, framework.Requires(cluster.RegistryPull)),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.PodsReady)
			reg := f.PullRegistry()
			img := f.FreshImage(ctx, "pull")
			node := f.WorkerNodes(ctx)[0]
			events := f.RecordEvents(ctx)
			pods := f.RecordPods(ctx)

			ginkgo.By("a Pod whose image no node has: the kubelet downloads it")
			mark := f.RegistryMark()
			created := time.Now()
			createPod(ctx, f, pullPod("first", img.Ref, node.Name, corev1.PullIfNotPresent))
			first, fetch := f.AwaitDownload(ctx, events, "first", mark, img)
			framework.RunningPod(ctx, pods, "first")
			evs, _ := framework.Await(ctx, events, "the first Pod's Started event", framework.Timeout.API, func(es []observe.Event) bool {
				return framework.FindEvent(es, "first", "Started") != nil
			})
			reasons := framework.EventReasons(evs, "first")
			addrs := nodeAddresses(node)
			fp := firstPullEvidence{Link: reg.Link, Reasons: reasons,
				InOrder: inOrder(reasons, "Scheduled", "Pulling", "Pulled", "Created", "Started"), Pulling: first.Pulling,
				Clients: fetch.Clients, FromNode: fromOnly(fetch.Clients, addrs),
				ManifestRequests: fetch.ManifestRequests, BlobRequests: fetch.BlobRequests, BlobBytes: fetch.BlobBytes,
				ImageBytes: img.Bytes, Downloaded: fetch.Whole(img)}
			if first.Pulled != nil {
				fp.PulledMessage = first.Pulled.Message
				t := pullTime(reg.Link, first.Pulled.Message, fetch)
				t.CreateToReadyMs = framework.Millis(framework.ReadyPod(ctx, pods, "first").At.Sub(created))
				firstPullTime.Record(t)
			} else {
				firstPullTime.Unobservable("the kubelet reported no Pulled event for the first Pod's image (%s), although the registry sent the node all of it", first.Summary())
			}
			firstPull.Record(fp)

			ginkgo.By("the same image again, IfNotPresent: the node has it")
			mark = f.RegistryMark()
			createPod(ctx, f, pullPod("again", img.Ref, node.Name, corev1.PullIfNotPresent))
			again := framework.AwaitPull(ctx, events, "again")
			seen := f.RegistryFetch(ctx, mark, img, nil)
			present := presentPullEvidence{Pulling: again.Pulling, RegistryRequests: len(seen.Requests)}
			if again.Pulled != nil {
				present.PulledMessage = again.Pulled.Message
				present.AlreadyPresent = strings.Contains(again.Pulled.Message, "already present")
			}
			presentAgain.Record(present)

			ginkgo.By("the same image again, Always: the kubelet asks the registry")
			mark = f.RegistryMark()
			created = time.Now()
			createPod(ctx, f, pullPod("always", img.Ref, node.Name, corev1.PullAlways))
			always := framework.AwaitPull(ctx, events, "always")
			var until func(freshimage.Fetch) bool
			if always.Pulled != nil {
				// The runtime resolved the tag: the registry answered.
				until = func(fe freshimage.Fetch) bool { return fe.ManifestRequests >= 1 }
			}
			asked := f.RegistryFetch(ctx, mark, img, until)
			aev := alwaysPullEvidence{Pulling: always.Pulling, RegistryAsked: asked.ManifestRequests > 0,
				ManifestRequests: asked.ManifestRequests, BlobRequests: asked.BlobRequests, BlobBytes: asked.BlobBytes}
			switch {
			case always.Pulled != nil:
				aev.Outcome, aev.Message = "pulled", always.Pulled.Message
				t := pullTime(reg.Link, always.Pulled.Message, asked)
				t.CreateToReadyMs = framework.Millis(framework.ReadyPod(ctx, pods, "always").At.Sub(created))
				alwaysPullTime.Record(t)
			case always.Failed != nil:
				aev.Outcome, aev.Message = "failed", firstLine(always.Failed.Message)
				alwaysPullTime.Unobservable("the Always Pod's pull failed: %s", aev.Message)
			default:
				alwaysPullTime.Unobservable("the Always Pod got neither a Pulled nor a Failed event within %s", framework.Timeout.PodStart)
			}
			alwaysPull.Record(aev)
		})
})

// pullPod is a test-app Pod of image on node (by its hostname label, so
// that the scheduler binds it and its events start with Scheduled).
func pullPod(name, image, node string, policy corev1.PullPolicy) *corev1.Pod {
	c := container("app", 8080)
	c.Image, c.ImagePullPolicy = image, policy
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: podsecurity.Restricted(corev1.PodSpec{
		NodeSelector: map[string]string{corev1.LabelHostname: node},
		Containers:   []corev1.Container{c},
	})}
}

// pullTime is a pull's time from the kubelet's Pulled event and from the
// registry's access log.
func pullTime(link, pulledMessage string, fetch freshimage.Fetch) pullTimeEvidence {
	ev := pullTimeEvidence{Link: link}
	if p, ok := podstate.PulledDetails(pulledMessage); ok {
		ev.PullMs, ev.WithWaitingMs, ev.SizeBytes = framework.Millis(p.Took), framework.Millis(p.WithWaiting), p.SizeBytes
	}
	if len(fetch.Requests) > 0 {
		ev.RegistryMs = fetch.Seconds() * 1000
		if fetch.Seconds() > 0 {
			ev.MiBPerSecond = float64(fetch.BlobBytes) / (1 << 20) / fetch.Seconds()
		}
	}
	return ev
}

func nodeAddresses(n corev1.Node) []string {
	var out []string
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP || a.Type == corev1.NodeExternalIP {
			out = append(out, a.Address)
		}
	}
	return out
}

// fromOnly reports whether there are clients and each is one of addrs.
func fromOnly(clients, addrs []string) bool {
	if len(clients) == 0 {
		return false
	}
	for _, c := range clients {
		if !slices.Contains(addrs, c) {
			return false
		}
	}
	return true
}

// inOrder reports whether want appear in reasons, in that order.
func inOrder(reasons []string, want ...string) bool {
	i := 0
	for _, r := range reasons {
		if i < len(want) && r == want[i] {
			i++
		}
	}
	return i == len(want)
}

// Evidence of the pull spec.

// A Pod whose image only the cluster's registry has (an image made for the
// spec, whose layer no node has), pulled with IfNotPresent: what its
// events say, and what the registry's access log says the node fetched.
type firstPullEvidence struct {
	// Link is what lies between the node and the registry.
	Link string `json:"link"`
	// Reasons are the Pod's event reasons, in the order received; InOrder:
	// Scheduled, Pulling, Pulled, Created and Started came in that order.
	Reasons []string `json:"reasons"`
	InOrder bool     `json:"inOrder"`
	// Pulling: the Pod got a Pulling event.
	Pulling bool `json:"pulling"`
	// PulledMessage is its Pulled event's message.
	PulledMessage string `json:"pulledMessage"`
	// Clients are the addresses the registry's requests for the image came
	// from; FromNode: all of them are the node's.
	Clients  []string `json:"clients"`
	FromNode bool     `json:"fromNode"`
	// ManifestRequests and BlobRequests count the registry's requests for
	// the image; BlobBytes is what it sent of its config and layer.
	ManifestRequests int   `json:"manifestRequests"`
	BlobRequests     int   `json:"blobRequests"`
	BlobBytes        int64 `json:"blobBytes"`
	// ImageBytes is the whole image as stored: manifest, config and
	// compressed layer.
	ImageBytes int64 `json:"imageBytes"`
	// Downloaded: the registry sent the node all of the image's blobs.
	Downloaded bool `json:"downloaded"`
}

// A pull's time, as the kubelet and the registry measured it.
type pullTimeEvidence struct {
	// Link is what lies between the node and the registry.
	Link string `json:"link"`
	// PullMs is the kubelet's (its Pulled event, to the millisecond): the
	// runtime's pull, the download and the layer's unpacking.
	// WithWaitingMs adds the wait for the kubelet's earlier pulls.
	PullMs        float64 `json:"pullMs"`
	WithWaitingMs float64 `json:"withWaitingMs"`
	// RegistryMs is the registry's (to the microsecond): from its first
	// request for the image to its last answer sent; MiBPerSecond is what
	// it sent over that time.
	RegistryMs   float64 `json:"registryMs"`
	MiBPerSecond float64 `json:"miBPerSecond"`
	// SizeBytes is the image's size as the runtime reports it (the Pulled
	// event), unpacked.
	SizeBytes int64 `json:"sizeBytes"`
	// CreateToReadyMs is the Pod's start as a user times it (time kubectl
	// apply && kubectl wait): from the spec's create request to the Pod
	// Ready, as this process received it.
	CreateToReadyMs float64 `json:"createToReadyMs"`
}

// The same image again, IfNotPresent, on the node that has it now.
type presentPullEvidence struct {
	// Pulling: the Pod got a Pulling event.
	Pulling bool `json:"pulling"`
	// PulledMessage is its Pulled event's message; AlreadyPresent: it says
	// the image is already present on the machine.
	PulledMessage  string `json:"pulledMessage"`
	AlreadyPresent bool   `json:"alreadyPresent"`
	// RegistryRequests is how many requests for the image the registry got
	// while the Pod started.
	RegistryRequests int `json:"registryRequests"`
}

// The same image again with imagePullPolicy Always, on the node that has
// it: did the kubelet ask the registry, and what was sent.
type alwaysPullEvidence struct {
	// Pulling: the Pod got a Pulling event.
	Pulling bool `json:"pulling"`
	// Outcome is "pulled" or "failed" (its Pulled or Failed event), "" if
	// neither came; Message is that event's message.
	Outcome string `json:"outcome"`
	Message string `json:"message"`
	// RegistryAsked: the registry got a request for the image's manifest
	// while the Pod started; ManifestRequests and BlobRequests count them,
	// BlobBytes is what was sent of its config and layer.
	RegistryAsked    bool  `json:"registryAsked"`
	ManifestRequests int   `json:"manifestRequests"`
	BlobRequests     int   `json:"blobRequests"`
	BlobBytes        int64 `json:"blobBytes"`
}

var (
	firstPull      = framework.DeclareEvidence[firstPullEvidence]("firstPull", specPull)
	firstPullTime  = framework.DeclareEvidence[pullTimeEvidence]("firstPullTime", specPull)
	presentAgain   = framework.DeclareEvidence[presentPullEvidence]("presentAgain", specPull)
	alwaysPull     = framework.DeclareEvidence[alwaysPullEvidence]("alwaysPull", specPull)
	alwaysPullTime = framework.DeclareEvidence[pullTimeEvidence]("alwaysPullTime", specPull)
)
