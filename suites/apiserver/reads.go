package apiserver

import (
	"context"
	"fmt"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/metrics"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
)

const (
	specReads  = "apiserver-storage-reads"
	specWrites = "apiserver-storage-writes"
)

var _ = ginkgo.Describe("API server reads", func() {
	f := framework.New("reads")

	ginkgo.It("a read is served from the API server's cache or from etcd; an update reads the object before it writes",
		framework.Checks(specReads),
		func(ctx ginkgo.SpecContext) {
			client := f.Client.CoreV1().RESTClient()
			if _, err := metrics.Scrape(ctx, client); err != nil {
				storageReads.Unobservable("the API server's metrics cannot be read here: %v", err)
				return
			}
			templates := f.Client.CoreV1().PodTemplates(f.Namespace)
			created, err := templates.Create(ctx, &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "read-me"},
				Template: corev1.PodTemplateSpec{Spec: podsecurity.Restricted(corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "unused"}}})}},
				metav1.CreateOptions{})
			framework.ExpectNoError(err, "create a PodTemplate")
			written := created.ResourceVersion

			count := func(what string, ready, act func() error, operations ...string) []int {
				ginkgo.GinkgoHelper()
				return etcdRequestsDuring(ctx, client, what, ready, act, []string{"podtemplates"}, operations...)
			}
			get := func(rv string) func() error {
				return func() error {
					_, err := templates.Get(ctx, "read-me", metav1.GetOptions{ResourceVersion: rv})
					return err
				}
			}
			ev := storageReadsEvidence{Trials: framework.GrowthTrials, CacheCurrent: true}
			ev.EtcdGetsForGet = count("GET the PodTemplate", nil, get(""), "get")[0]
			ev.EtcdGetsForGetRV0 = count("GET the PodTemplate with resourceVersion=0", nil, get("0"), "get")[0]
			n := 0
			// Each PATCH starts once the watch cache holds the last write
			// (a resourceVersion=0 GET is served from it): otherwise the
			// previous trial's own write, not yet in the cache, makes the
			// API server go to etcd, and the count measures the cache's lag
			// instead of the PATCH. The wait comes before the counting (its
			// GETs reach etcd when there is no watch cache).
			cacheReady := func() error {
				if !cacheHolds(ctx, templates, "read-me", written) {
					ev.CacheCurrent = false
				}
				return nil
			}
			patched := count("PATCH the PodTemplate", cacheReady, func() error {
				n++
				p, err := templates.Patch(ctx, "read-me", types.MergePatchType,
					fmt.Appendf(nil, `{"metadata":{"labels":{"patched":"%d"}}}`, n), metav1.PatchOptions{})
				if err == nil {
					written = p.ResourceVersion
				}
				return err
			}, "get", "update")
			ev.EtcdGetsForPatch, ev.EtcdUpdatesForPatch = patched[0], patched[1]
			storageReads.Record(ev)
		})

	ginkgo.It("a write is a PUT in an etcd transaction, committed through Raft",
		framework.Checks(specWrites, framework.Requires(cluster.EtcdAccess)),
		func(ctx ginkgo.SpecContext) {
			client := f.Client.CoreV1().RESTClient()
			etcd := f.Etcd()
			// The API server's and etcd's counters, read together.
			both := func(ctx context.Context) (metrics.Samples, error) {
				api, err := metrics.Scrape(ctx, client)
				if err != nil {
					return nil, err
				}
				ours, err := etcd.Metrics(ctx)
				return append(api, ours...), err
			}
			if _, err := both(ctx); err != nil {
				etcdWrite.Unobservable("the API server's or etcd's metrics cannot be read here: %v", err)
				return
			}
			n := 0
			create := func() error {
				n++
				_, err := f.Client.CoreV1().PodTemplates(f.Namespace).Create(ctx, &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("written-%d", n)},
					Template: corev1.PodTemplateSpec{Spec: podsecurity.Restricted(corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "unused"}}})}},
					metav1.CreateOptions{})
				return err
			}
			grew := framework.LeastGrowth(ctx, "create a PodTemplate", create, both,
				framework.Counter("etcd_requests_total", map[string]string{"operation": "create", "resource": "podtemplates"}),
				framework.Counter("etcd_mvcc_txn_total", nil), framework.Counter("etcd_mvcc_put_total", nil),
				framework.Counter("etcd_server_proposals_committed_total", nil), framework.Counter("etcd_server_proposals_applied_total", nil))
			now, err := etcd.Metrics(ctx)
			framework.ExpectNoError(err, "read etcd's metrics")
			etcdWrite.Record(etcdWriteEvidence{Trials: framework.GrowthTrials, APIServerCreates: grew[0], Txns: grew[1], Puts: grew[2],
				ProposalsCommitted: grew[3], ProposalsApplied: grew[4], HasLeader: now.Sum("etcd_server_has_leader", nil) == 1})
		})
})

// cacheHolds waits, at most Timeout.API, until the API server's watch cache
// serves the object at resourceVersion rv, and says whether it did.
func cacheHolds(ctx context.Context, templates typedcorev1.PodTemplateInterface, name, rv string) bool {
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, framework.Timeout.API, true, func(ctx context.Context) (bool, error) {
		t, err := templates.Get(ctx, name, metav1.GetOptions{ResourceVersion: "0"})
		return err == nil && t.ResourceVersion == rv, nil
	})
	return err == nil
}

// etcdRequestsDuring returns, per operation, the least number of etcd
// requests the API server counted for resources (etcd_requests_total)
// around one run of act (ready, if any, runs before and is not counted).
func etcdRequestsDuring(ctx context.Context, client rest.Interface, what string, ready, act func() error, resources []string, operations ...string) []int {
	ginkgo.GinkgoHelper()
	counters := make([]func(metrics.Samples) float64, len(operations))
	for i, op := range operations {
		counters[i] = func(s metrics.Samples) (n float64) {
			for _, r := range resources {
				n += s.Sum("etcd_requests_total", map[string]string{"operation": op, "resource": r})
			}
			return n
		}
	}
	return framework.LeastGrowthReady(ctx, what, ready, act, func(ctx context.Context) (metrics.Samples, error) { return metrics.Scrape(ctx, client) }, counters...)
}

// Evidence: what the specs above record, under the names the claims files use.

// How the API server's reads of one PodTemplate reached etcd: the change
// in its own count of etcd requests (etcd_requests_total, resource
// podtemplates, which no other spec uses) around each request. Each is
// the least of several trials, since anything else touching PodTemplates
// at the time can only add to a count.
type storageReadsEvidence struct {
	// EtcdGetsForGet: a GET without a resourceVersion (the most recent
	// state); EtcdGetsForGetRV0: a GET with resourceVersion=0 (any state
	// the API server has).
	EtcdGetsForGet    int `json:"etcdGetsForGet"`
	EtcdGetsForGetRV0 int `json:"etcdGetsForGetRV0"`
	// A merge PATCH: the etcd reads and writes it took.
	EtcdGetsForPatch int `json:"etcdGetsForPatch"`
	// EtcdUpdatesForPatch is the etcd writes that PATCH took.
	EtcdUpdatesForPatch int `json:"etcdUpdatesForPatch"`
	// Trials is how many times each was measured (the least counts are kept).
	Trials int `json:"trials"`
	// CacheCurrent: before every PATCH the watch cache held the last
	// write (within Timeout.API).
	CacheCurrent bool `json:"cacheCurrent"`
}

// One create's way into etcd, from the API server's and etcd's own
// counters: the least each grew around a create, over Trials creates.
type etcdWriteEvidence struct {
	// APIServerCreates: the API server's etcd requests of operation
	// create for PodTemplates.
	APIServerCreates int `json:"apiServerCreates"`
	// Txns and Puts: etcd's transactions of more than one operation (a
	// guarded create is one put: etcd does not count it here), and its
	// puts (etcd_mvcc_txn_total, etcd_mvcc_put_total).
	Txns int `json:"txns"`
	Puts int `json:"puts"`
	// ProposalsCommitted and ProposalsApplied: Raft proposals the member
	// committed and applied.
	ProposalsCommitted int `json:"proposalsCommitted"`
	ProposalsApplied   int `json:"proposalsApplied"`
	// HasLeader: etcd_server_has_leader is 1.
	HasLeader bool `json:"hasLeader"`
	// Trials is how many creates were measured (the least growth of each
	// counter is kept).
	Trials int `json:"trials"`
}

var (
	storageReads = framework.DeclareEvidence[storageReadsEvidence]("storageReads", specReads)
	etcdWrite    = framework.DeclareEvidence[etcdWriteEvidence]("etcdWrite", specWrites)
)
