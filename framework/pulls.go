package framework

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/contract/registrylog"
	"github.com/kubeproof/kubeproof/kube/freshimage"
	"github.com/kubeproof/kubeproof/kube/observe"
)

// RegistryComponent names the registry kubeproof serves beside the cluster
// in what a spec saw or missed: it is the harness's, not Kubernetes'.
const RegistryComponent = "kubeproof registry"

// PullRegistry is the registry kubeproof serves beside the cluster; the
// spec declares RegistryPull (Requires, so that it is skipped before it
// begins without one; or Uses, asking Has first) and skips without one,
// saying why (RegistryPull's reason).
func (f *Framework) PullRegistry() *cluster.PullRegistry {
	ginkgo.GinkgoHelper()
	if !f.Has(cluster.RegistryPull) {
		ginkgo.Skip(f.Cluster.Missing(cluster.RegistryPull))
	}
	if f.Cluster.PullRegistry == nil {
		ginkgo.Skip(fmt.Sprintf("provider %s has %s but names no registry", f.Cluster.Provider, cluster.RegistryPull))
	}
	return f.Cluster.PullRegistry
}

// FreshImage pushes an image no node has (package freshimage), tagged
// after the spec's namespace and name. A registry that does not take it
// stops the spec: its claims are not checkable, naming the registry.
func (f *Framework) FreshImage(ctx context.Context, name string) freshimage.Image {
	ginkgo.GinkgoHelper()
	reg := f.PullRegistry()
	img, err := freshimage.Push(ctx, reg, f.Namespace+"-"+name)
	if err != nil {
		Unmet(RegistryComponent, "the cluster's registry took an image of the spec's own", err.Error())
	}
	return img
}

// RegistryMark is where the registry's access log ends now: what a node
// fetches from now on is logged after it.
func (f *Framework) RegistryMark() int64 {
	ginkgo.GinkgoHelper()
	reg := f.PullRegistry()
	if reg.AccessLog == "" {
		return 0
	}
	at, err := registrylog.Size(reg.AccessLog)
	ExpectNoError(err, "read the registry's access log")
	return at
}

// RegistryFetch is what the registry's access log, from mark on, says was
// fetched of img. The registry logs a request once it has answered it,
// which may come a moment after the node's runtime has the answer: until
// holds when the log shows what the caller knows happened (the node's
// runtime reported the pull done), and is awaited for at most
// Timeout.API; what was logged by then is returned either way.
func (f *Framework) RegistryFetch(ctx context.Context, mark int64, img freshimage.Image, until func(freshimage.Fetch) bool) freshimage.Fetch {
	ginkgo.GinkgoHelper()
	reg := f.PullRegistry()
	if reg.AccessLog == "" {
		return freshimage.Fetch{}
	}
	var fetch freshimage.Fetch
	var readErr error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, Timeout.API, true, func(context.Context) (bool, error) {
		var reqs []registrylog.Request
		reqs, _, readErr = registrylog.Read(reg.AccessLog, mark)
		if readErr != nil {
			return false, readErr
		}
		fetch = freshimage.FetchOf(reqs, img)
		return until == nil || until(fetch), nil
	})
	if readErr != nil {
		ExpectNoError(readErr, "read the registry's access log")
	}
	if err != nil && ctx.Err() != nil {
		ginkgo.Fail("interrupted while reading the registry's access log")
	}
	if err != nil {
		ginkgo.GinkgoWriter.Printf("the registry's access log did not show the awaited fetch of %s within %s; last seen: %d manifest and %d blob requests\n",
			img.Ref, Timeout.API, fetch.ManifestRequests, fetch.BlobRequests)
	}
	return fetch
}

// AwaitDownload waits for the kubelet's pull of Pod pod's image img
// (AwaitPull) and reads from the registry's access log, from mark on, what
// the node fetched of it. Its precondition, the registry's, is unmet only
// where neither the kubelet reported a download nor the registry's log
// shows one: a registry that sent the node the whole image served, and a
// kubelet that did not say so (no Pulled event) is what the spec saw of
// the kubelet, for its claims to judge, not a registry that failed.
func (f *Framework) AwaitDownload(ctx context.Context, events *observe.Recorder, pod string, mark int64, img freshimage.Image) (PullOutcome, freshimage.Fetch) {
	ginkgo.GinkgoHelper()
	pull := AwaitPull(ctx, events, pod)
	fetch := f.RegistryFetch(ctx, mark, img, func(fe freshimage.Fetch) bool { return fe.Whole(img) })
	if !pull.Downloaded() && !fetch.Whole(img) {
		Unmet(RegistryComponent, "the node downloaded the spec's image from the cluster's registry",
			fmt.Sprintf("Pod %s's image %s: %s; the registry's access log: %d manifest and %d blob requests for it, %d bytes of its blobs sent",
				pod, img.Ref, pull.Summary(), fetch.ManifestRequests, fetch.BlobRequests, fetch.BlobBytes))
	}
	return pull, fetch
}

// PullOutcome is how the kubelet's pull of a Pod's image ended, as its
// events say.
type PullOutcome struct {
	// Reasons are the Pod's event reasons, in the order received.
	Reasons []string
	// Pulling: the Pod got a Pulling event.
	Pulling bool
	// Pulled is the Pulled event ("Successfully pulled ..." or "...
	// already present on machine"), Failed the Failed one (nil if none
	// came).
	Pulled, Failed *corev1.Event
}

// AwaitPull waits for the kubelet's Pulled or Failed event of Pod pod
// (for at most Timeout.PodStart, a download included).
func AwaitPull(ctx context.Context, events *observe.Recorder, pod string) PullOutcome {
	ginkgo.GinkgoHelper()
	evs, _ := Await(ctx, events, "the kubelet's Pulled or Failed event of Pod "+pod, Timeout.PodStart, func(es []observe.Event) bool {
		return FindEvent(es, pod, "Pulled") != nil || pullFailed(es, pod) != nil
	})
	reasons := EventReasons(evs, pod)
	return PullOutcome{Reasons: reasons, Pulling: FindEvent(evs, pod, "Pulling") != nil,
		Pulled: FindEvent(evs, pod, "Pulled"), Failed: pullFailed(evs, pod)}
}

// pullFailed is the Failed event of a pull (not of a container's start).
func pullFailed(es []observe.Event, pod string) *corev1.Event {
	if e := FindEvent(es, pod, "Failed"); e != nil && strings.Contains(e.Message, "pull") {
		return e
	}
	return nil
}

// Downloaded is the pull, if the Pulled event says the image was
// downloaded (not "already present").
func (o PullOutcome) Downloaded() bool {
	return o.Pulled != nil && !strings.Contains(o.Pulled.Message, "already present")
}

// Summary says how the pull ended, in a line.
func (o PullOutcome) Summary() string {
	switch {
	case o.Failed != nil:
		msg, _, _ := strings.Cut(strings.TrimSpace(o.Failed.Message), "\n")
		return "Failed: " + msg
	case o.Pulled != nil:
		return "Pulled: " + o.Pulled.Message
	}
	return "neither a Pulled nor a Failed event within " + Timeout.PodStart.String() + "; events: " + strings.Join(o.Reasons, ", ")
}
