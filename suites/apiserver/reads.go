package apiserver

import (
	"fmt"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/metrics"
)

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

			// count runs act and returns how many etcd requests of
			// operation it made for PodTemplates, the least over trials.
			const trials = 3
			count := func(what string, act func() error, operations ...string) []int {
				ginkgo.GinkgoHelper()
				least := make([]int, len(operations))
				for t := range trials {
					before, err := metrics.Scrape(ctx, client)
					framework.ExpectNoError(err, "read the API server's metrics before "+what)
					framework.ExpectNoError(act(), what)
					after, err := metrics.Scrape(ctx, client)
					framework.ExpectNoError(err, "read the API server's metrics after "+what)
					for i, op := range operations {
						n := int(etcdRequests(after, op) - etcdRequests(before, op))
						if t == 0 || n < least[i] {
							least[i] = n
						}
					}
				}
				return least
			}
			get := func(rv string) func() error {
				return func() error {
					_, err := templates.Get(ctx, "read-me", metav1.GetOptions{ResourceVersion: rv})
					return err
				}
			}
			ev := storageReadsEvidence{Trials: trials}
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

// etcdRequests is the API server's count of etcd requests of operation
// for PodTemplates.
func etcdRequests(s metrics.Samples, operation string) float64 {
	return s.Sum("etcd_requests_total", map[string]string{"operation": operation, "resource": "podtemplates"})
}
