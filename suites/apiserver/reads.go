package apiserver

import (
	"context"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/metrics"
)

var _ = ginkgo.Describe("API server reads", func() {
	f := framework.New("reads")

	ginkgo.It("a read is served from the API server's cache or from etcd; an update reads the object before it writes",
		framework.Checks(specReads, "003-ETCD-CLIENT-READS", "003-CACHE-OR-ETCD", "003-UPDATE-READS-FIRST"),
		func(ctx ginkgo.SpecContext) {
			client := f.Client.CoreV1().RESTClient()
			if _, err := metrics.Scrape(ctx, client); err != nil {
				storageReads.Unobservable("the API server's metrics cannot be read here: %v", err)
				return
			}
			templates := f.Client.CoreV1().PodTemplates(f.Namespace)
			_, err := templates.Create(ctx, &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "read-me"},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "unused"}}}}},
				metav1.CreateOptions{})
			framework.ExpectNoError(err, "create a PodTemplate")

			count := func(what string, act func() error, operations ...string) []int {
				ginkgo.GinkgoHelper()
				return etcdRequestsDuring(ctx, client, what, act, []string{"podtemplates"}, operations...)
			}
			get := func(rv string) func() error {
				return func() error {
					_, err := templates.Get(ctx, "read-me", metav1.GetOptions{ResourceVersion: rv})
					return err
				}
			}
			ev := storageReadsEvidence{Trials: etcdTrials}
			ev.EtcdGetsForGet = count("GET the PodTemplate", get(""), "get")[0]
			ev.EtcdGetsForGetRV0 = count("GET the PodTemplate with resourceVersion=0", get("0"), "get")[0]
			n := 0
			patched := count("PATCH the PodTemplate", func() error {
				n++
				_, err := templates.Patch(ctx, "read-me", types.MergePatchType,
					fmt.Appendf(nil, `{"metadata":{"labels":{"patched":"%d"}}}`, n), metav1.PatchOptions{})
				return err
			}, "get", "update")
			ev.EtcdGetsForPatch, ev.EtcdUpdatesForPatch = patched[0], patched[1]
			storageReads.Record(ev)
		})
})

// etcdTrials is how often etcdRequestsDuring repeats an action.
const etcdTrials = 3

// etcdRequestsDuring runs act etcdTrials times and returns, per operation,
// the least number of etcd requests the API server counted for resources
// (etcd_requests_total) around one run. The least, since anything else
// touching those resources at the time can only add to a count.
func etcdRequestsDuring(ctx context.Context, client rest.Interface, what string, act func() error, resources []string, operations ...string) []int {
	ginkgo.GinkgoHelper()
	count := func(s metrics.Samples, op string) (n float64) {
		for _, r := range resources {
			n += s.Sum("etcd_requests_total", map[string]string{"operation": op, "resource": r})
		}
		return n
	}
	least := make([]int, len(operations))
	for t := range etcdTrials {
		before, err := metrics.Scrape(ctx, client)
		framework.ExpectNoError(err, "read the API server's metrics before "+what)
		framework.ExpectNoError(act(), what)
		after, err := metrics.Scrape(ctx, client)
		framework.ExpectNoError(err, "read the API server's metrics after "+what)
		for i, op := range operations {
			if n := int(count(after, op) - count(before, op)); t == 0 || n < least[i] {
				least[i] = n
			}
		}
	}
	return least
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
	EtcdGetsForPatch    int `json:"etcdGetsForPatch"`
	EtcdUpdatesForPatch int `json:"etcdUpdatesForPatch"`
	Trials              int `json:"trials"`
}

var storageReads = framework.DeclareEvidence[storageReadsEvidence]("storageReads", specReads)
