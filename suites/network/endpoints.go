package network

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/audit"
	"github.com/kubeproof/kubeproof/kube/observe"
)

// Beside the EndpointSlices (the EndpointSlice controller's, what
// kube-proxy reads), the endpoints controller keeps the Service's Endpoints
// object (v1), which seed 004 names: "Endpoint Controller가 ... Service의
// Endpoints에 Pod IP를 등록합니다". Both are observed, so that a claim reads
// the object and the controller its sentence names.

// endpointsTracker follows the Service's Endpoints object.
type endpointsTracker struct {
	rec *observe.Recorder
	ev  endpointsEvidence
}

// trackEndpoints starts recording the Endpoints object of Service name.
func trackEndpoints(ctx context.Context, f *framework.Framework, name string) *endpointsTracker {
	rec := f.Record(ctx, "Endpoints", cache.NewListWatchFromClient(f.Client.CoreV1().RESTClient(), "endpoints", f.Namespace,
		fields.OneTermEqualSelector("metadata.name", name)))
	return &endpointsTracker{rec: rec}
}

// await waits, within window, until ip is listed ready (or not ready) in
// the latest Endpoints object, and says whether it was.
func (t *endpointsTracker) await(ctx context.Context, what, ip string, wantReady bool, window time.Duration) bool {
	ginkgo.GinkgoHelper()
	_, ok := framework.Await(ctx, t.rec, what, window, func(es []observe.Event) bool {
		ready, found := addressIn(es, ip)
		return found && ready == wantReady
	})
	return ok
}

// addressIn finds ip in the latest Endpoints object: among its ready
// addresses (ready) or its notReadyAddresses.
func addressIn(events []observe.Event, ip string) (ready, found bool) {
	// The deprecated v1 Endpoints is the object the seed names, observed on purpose.
	for _, e := range observe.Latest[*corev1.Endpoints](events) { //nolint:staticcheck // see above
		for _, s := range e.Subsets {
			for _, a := range s.Addresses {
				if a.IP == ip {
					return true, true
				}
			}
			for _, a := range s.NotReadyAddresses {
				if a.IP == ip {
					return false, true
				}
			}
		}
	}
	return false, false
}

// record reads who wrote the Endpoints object, from the audit log, and
// records what was seen.
func (t *endpointsTracker) record(f *framework.Framework, log *audit.Log, from audit.Offset) {
	if log != nil {
		writes, err := log.Since(from, audit.All(audit.On("endpoints", f.Namespace, "served", ""), audit.Verbs("create", "update", "patch")))
		framework.ExpectNoError(err, "read the Endpoints' writes from the audit log")
		for _, w := range writes {
			if w.Code() < 300 && !slices.Contains(t.ev.WrittenBy, w.User.Username) {
				t.ev.WrittenBy = append(t.ev.WrittenBy, w.User.Username)
			}
		}
		slices.Sort(t.ev.WrittenBy)
	}
	endpointsObject.Record(t.ev)
}

// recordProxyWatches reads from the audit log which resources kube-proxy
// watches (its user agent is kube-proxy's, whatever user it runs as).
func recordProxyWatches(f *framework.Framework, log *audit.Log) {
	ginkgo.GinkgoHelper()
	if log == nil {
		proxyWatches.Unobservable("%s", f.Missing(cluster.AuditLog))
		return
	}
	watches, err := log.Since(0, audit.All(audit.Verbs("watch"), func(e audit.Event) bool {
		return strings.HasPrefix(e.UserAgent, "kube-proxy/") && e.ObjectRef != nil
	}))
	framework.ExpectNoError(err, "read kube-proxy's watches from the audit log")
	ev := proxyWatchesEvidence{}
	for _, w := range watches {
		if r := w.ObjectRef.Resource; !slices.Contains(ev.Resources, r) {
			ev.Resources = append(ev.Resources, r)
		}
	}
	if len(ev.Resources) == 0 {
		proxyWatches.Unobservable("the audit log has no watch by kube-proxy (user agent kube-proxy/...)")
		return
	}
	slices.Sort(ev.Resources)
	ev.EndpointSlices, ev.Endpoints = slices.Contains(ev.Resources, "endpointslices"), slices.Contains(ev.Resources, "endpoints")
	proxyWatches.Record(ev)
}

// The Service's Endpoints object while server-b's readiness changed.
type endpointsEvidence struct {
	// ReadyAfterPass: server-b's IP was listed among the ready addresses
	// once its Pod was Ready; NotReadyWhenProbeFails: moved to
	// notReadyAddresses once its readiness probe failed; ReadyAgain: back
	// among the ready ones once it passed again (each within
	// Timeout.Endpoint).
	ReadyAfterPass         bool `json:"readyAfterPass"`
	NotReadyWhenProbeFails bool `json:"notReadyWhenProbeFails"`
	ReadyAgain             bool `json:"readyAgain"`
	// WrittenBy are the users whose writes of the object succeeded (audit
	// log), sorted.
	WrittenBy []string `json:"writtenBy"`
}

// What kube-proxy watches, from the audit log since the cluster started.
type proxyWatchesEvidence struct {
	// Resources are the resources it watches, sorted; EndpointSlices and
	// Endpoints: those among them.
	Resources      []string `json:"resources"`
	EndpointSlices bool     `json:"endpointSlices"`
	Endpoints      bool     `json:"endpoints"`
}

var (
	endpointsObject = framework.DeclareEvidence[endpointsEvidence]("endpointsObject", specReadiness)
	proxyWatches    = framework.DeclareEvidence[proxyWatchesEvidence]("proxyWatches", specReadiness)
)
