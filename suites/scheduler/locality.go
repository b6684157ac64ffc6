package scheduler

import (
	"context"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeproof/kubeproof/framework"
)

// localityImage is a name no registry serves: the Pods go only to simulated
// nodes, which run nothing, so it is never pulled.
const localityImage = "kubeproof.local/locality-probe:v1"

// localityControlImage is held by neither simulated node.
const localityControlImage = "kubeproof.local/locality-control:v1"

const specLocality = "scheduler-image-locality"

var _ = ginkgo.Describe("Scheduler image locality", func() {
	f := framework.New("locality")

	ginkgo.It("a Pod goes to the node that already holds its image, though another node has more room",
		framework.Checks(specLocality, framework.Disturbs("adds simulated Nodes")),
		func(ctx ginkgo.SpecContext) {
			pods := f.RecordPods(ctx)
			// ImageLocality scores the size scaled by the share of nodes
			// holding the image (1 of NodesInCluster): at its ceiling (1000
			// MB scores 100) up to 32 nodes, and above the free-room gap
			// below (at most 34 points, by the third Pod) up to 92 nodes,
			// however many nodes parallel specs add.
			const size = int64(32) << 30
			// The node with the image is the smaller one: by free resources
			// alone (NodeResourcesFit's LeastAllocated) every Pod goes to the
			// other, so only ImageLocality can bring them here. Two equal
			// nodes would tie, and the scheduler breaks a tie at random.
			withImage := f.SimulatedNode(ctx, "with-image", framework.SimNode{CPU: "4", Memory: "8Gi",
				Images: []corev1.ContainerImage{{Names: []string{localityImage}, SizeBytes: size}}})
			roomy := f.SimulatedNode(ctx, "without-image", framework.SimNode{CPU: "16", Memory: "32Gi"})
			// A new Node carries node.kubernetes.io/not-ready:NoSchedule (the
			// API server's TaintNodesByCondition adds it) until the node
			// lifecycle controller sees it Ready and removes it, each node on
			// its own. A Pod placed while the image node still has it can
			// only go to the other node: that, not ImageLocality, put 0 and 1
			// of 3 Pods on the image node in runs beside other specs. So a
			// pilot Pod is bound to each node first: its binding shows that
			// the scheduler has both nodes, untainted, before any probe.
			pilots := map[string]*corev1.Node{"pilot-image": withImage, "pilot-roomy": roomy}
			for name, node := range pilots {
				pilot := newPod(name, "10m", "16Mi")
				f.TolerateSimulated(&pilot.Spec)
				requireNodeLabel(pilot, corev1.LabelHostname, node.Name)
				createPod(ctx, f, pilot)
			}
			bound := bindings(ctx, pods, "pilot-image", "pilot-roomy")
			for name, node := range pilots {
				if bound[name] == "" {
					pilotUnmet(ctx, f, name, node.Name)
				}
			}
			nodes, err := f.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			framework.ExpectNoError(err, "list the nodes")
			ev := imageLocalityEvidence{ImageSizeMB: size >> 20, NodesInCluster: len(nodes.Items)}

			// The control: the same Pod, of an image neither node holds.
			// Where it goes, room alone decides; a scheduler that packs
			// Pods onto the fuller node (MostAllocated) would put it, and
			// the probes with it, on the image node without ImageLocality.
			control := newPod("control", "500m", "1Gi")
			control.Spec.Containers[0].Image = localityControlImage
			control.Spec.Containers[0].ImagePullPolicy = corev1.PullIfNotPresent
			f.TolerateSimulated(&control.Spec)
			requireNodeLabel(control, framework.SimulatedForLabel, f.Namespace)
			createPod(ctx, f, control)
			controlNode := bindings(ctx, pods, "control")["control"]
			if controlNode == "" {
				imageLocality.Record(ev)
				framework.Unmet("kube-scheduler", "Pod control was bound to a node", "not bound within "+framework.Timeout.Bind.String())
			}
			ev.ControlOnImageNode = controlNode == withImage.Name

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

// pilotUnmet names why a pilot Pod was not bound to its node: the node
// still tainted not-ready (the node lifecycle controller did not remove it)
// or, untainted, the scheduler not binding.
func pilotUnmet(ctx context.Context, f *framework.Framework, pod, node string) {
	ginkgo.GinkgoHelper()
	n, err := f.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	framework.ExpectNoError(err, "read node %s", node)
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady {
			framework.Unmet("kube-controller-manager", "the node lifecycle controller removed "+corev1.TaintNodeNotReady+" from Ready node "+node,
				"still there "+framework.Timeout.Bind.String()+" after Pod "+pod+" was created")
		}
	}
	framework.Unmet("kube-scheduler", "Pod "+pod+" was bound to node "+node, "not bound within "+framework.Timeout.Bind.String())
}

// Evidence: what the specs above record, under the names the claims files use.

// Where the scheduler put Pods of an image that one of two simulated nodes,
// the one with less room, reports holding, once it had bound a Pod to each
// node (so both were known to it and schedulable).
type imageLocalityEvidence struct {
	// Pods is how many of the 3 Pods were bound; OnImageNode how many to the
	// node with the image.
	Pods        int `json:"pods"`
	OnImageNode int `json:"onImageNode"`
	// AllOnImageNode: every Pod went to the node with the image. Without
	// ImageLocality every Pod goes to the other node, which has four times
	// the room.
	AllOnImageNode bool `json:"allOnImageNode"`
	// ControlOnImageNode: the control Pod, the same but of an image
	// neither node holds (bound before the probes), went to the node with
	// the image all the same: room, not the image, would then explain the
	// probes' placement.
	ControlOnImageNode bool `json:"controlOnImageNode"`
	// ImageSizeMB is the image's size as that node reports it.
	ImageSizeMB int64 `json:"imageSizeMB"`
	// NodesInCluster is how many nodes the cluster had, the simulated ones
	// included: ImageLocality scales the image's size by the share of
	// nodes holding it (here 1 of them).
	NodesInCluster int `json:"nodesInCluster"`
}

var imageLocality = framework.DeclareEvidence[imageLocalityEvidence]("imageLocality", specLocality)
