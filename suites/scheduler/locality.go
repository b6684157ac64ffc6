package scheduler

import (
	"fmt"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeproof/kubeproof/framework"
)

// localityImage is a name no registry serves: the Pods go only to simulated
// nodes, which run nothing, so it is never pulled.
const localityImage = "kubeproof.local/locality-probe:v1"

const specLocality = "scheduler-image-locality"

var _ = ginkgo.Describe("Scheduler image locality", func() {
	f := framework.New("locality")

	ginkgo.It("a Pod goes to the node that already holds its image, though another node has more room",
		framework.Checks(specLocality, framework.Disturbs("adds simulated Nodes")),
		func(ctx ginkgo.SpecContext) {
			pods := f.RecordPods(ctx)
			// Large enough that ImageLocality's score (the size, scaled by
			// the share of nodes holding it) is at its ceiling however many
			// nodes parallel specs add.
			const size = int64(32) << 30
			// The node with the image is the smaller one: by free resources
			// alone (NodeResourcesFit's LeastAllocated) every Pod goes to the
			// other, so only ImageLocality can bring them here. Two equal
			// nodes would tie, and the scheduler breaks a tie at random.
			withImage := f.SimulatedNode(ctx, "with-image", framework.SimNode{CPU: "4", Memory: "8Gi",
				Images: []corev1.ContainerImage{{Names: []string{localityImage}, SizeBytes: size}}})
			roomy := f.SimulatedNode(ctx, "without-image", framework.SimNode{CPU: "16", Memory: "32Gi"})
			// The scheduler learns of nodes through its own watch: a Pod it
			// binds to the node made last shows that it knows both (one
			// watch, in order), so no Pod below is placed before it does.
			pilot := newPod("pilot", "10m", "16Mi")
			f.TolerateSimulated(&pilot.Spec)
			requireNodeLabel(pilot, corev1.LabelHostname, roomy.Name)
			createPod(ctx, f, pilot)
			if bindings(ctx, pods, pilot.Name)[pilot.Name] == "" {
				framework.Unmet("kube-scheduler", "Pod pilot was bound to node "+roomy.Name, "not bound within "+framework.Timeout.Bind.String())
			}
			nodes, err := f.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			framework.ExpectNoError(err, "list the nodes")
			ev := imageLocalityEvidence{ImageSizeMB: size >> 20, NodesInCluster: len(nodes.Items)}

			// One at a time, so that each choice sees the Pods before it.
			for i := range 3 {
				name := fmt.Sprintf("probe-%d", i)
				p := newPod(name, "500m", "1Gi")
				p.Spec.Containers[0].Image = localityImage
				p.Spec.Containers[0].ImagePullPolicy = corev1.PullIfNotPresent
				f.TolerateSimulated(&p.Spec)
				requireNodeLabel(p, framework.SimulatedForLabel, f.Namespace)
				createPod(ctx, f, p)
				node := bindings(ctx, pods, name)[name]
				if node == "" {
					imageLocality.Record(ev)
					framework.Unmet("kube-scheduler", "Pod "+name+" was bound to a node", "not bound within "+framework.Timeout.Bind.String())
				}
				ev.Pods++
				if node == withImage.Name {
					ev.OnImageNode++
				}
			}
			ev.AllOnImageNode = ev.OnImageNode == ev.Pods
			imageLocality.Record(ev)
		})
})

// Evidence: what the specs above record, under the names the claims files use.

// Where the scheduler put Pods of an image that one of two otherwise equal
// simulated nodes reports holding.
type imageLocalityEvidence struct {
	// Pods is how many of the 3 Pods were bound; OnImageNode how many to the
	// node with the image.
	Pods        int `json:"pods"`
	OnImageNode int `json:"onImageNode"`
	// AllOnImageNode: every Pod went to the node with the image. Without
	// ImageLocality every Pod goes to the other node, which has four times
	// the room.
	AllOnImageNode bool `json:"allOnImageNode"`
	// ImageSizeMB is the image's size as that node reports it.
	ImageSizeMB int64 `json:"imageSizeMB"`
	// NodesInCluster is how many nodes the cluster had, the simulated ones
	// included.
	NodesInCluster int `json:"nodesInCluster"`
}

var imageLocality = framework.DeclareEvidence[imageLocalityEvidence]("imageLocality", specLocality)
