package scheduler

import (
	"context"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeproof/kubeproof/framework"
)

const zoneLabel = "topology.kubernetes.io/zone"

var _ = ginkgo.Describe("Scheduler scoring", func() {
	f := framework.New("score")

	ginkgo.It("among feasible nodes: the less allocated is preferred, node affinity and topology spread are honoured",
		framework.Checks("scheduler-scoring", "002-SCORE-LEAST-ALLOCATED", "004-SCORE-LEAST-REQUESTED", "004-TOPOLOGY-AFFINITY"),
		func(ctx ginkgo.SpecContext) {
			pods := f.RecordPods(ctx)
			busy := f.SimulatedNode(ctx, "busy", framework.SimNode{CPU: "4", Memory: "8Gi",
				Labels: map[string]string{zoneLabel: "zone-a", "disk": "hdd"}})
			idle := f.SimulatedNode(ctx, "idle", framework.SimNode{CPU: "4", Memory: "8Gi",
				Labels: map[string]string{zoneLabel: "zone-b", "disk": "ssd"}})
			role := map[string]string{busy.Name: "busy", idle.Name: "idle"}

			// Both nodes get their first Pod through the scheduler, pinned by
			// hostname: once those are bound, the scheduler's cache holds both
			// nodes and the filler's requests. (A Pod created with nodeName
			// can reach the cache after the next Pod is scored.)
			ginkgo.By("occupying 3 of the busy node's 4 CPUs and 0.1 of the idle node's")
			filler := newPod("filler", "3", "4Gi")
			requireNodeLabel(filler, corev1.LabelHostname, busy.Name)
			f.TolerateSimulated(&filler.Spec)
			createPod(ctx, f, filler)
			marker := newPod("marker", "100m", "64Mi")
			requireNodeLabel(marker, corev1.LabelHostname, idle.Name)
			f.TolerateSimulated(&marker.Spec)
			createPod(ctx, f, marker)
			boundTo(ctx, pods, "filler")
			boundTo(ctx, pods, "marker")

			ginkgo.By("a Pod both nodes fit")
			free := newPod("free", "500m", "256Mi")
			f.TolerateSimulated(&free.Spec)
			createPod(ctx, f, free)
			freeNode := role[boundTo(ctx, pods, "free")]

			ginkgo.By("a Pod that requires the busy node's label (node affinity)")
			affine := newPod("affine", "500m", "256Mi")
			f.TolerateSimulated(&affine.Spec)
			requireNodeLabel(affine, "disk", "hdd")
			createPod(ctx, f, affine)
			affineNode := role[boundTo(ctx, pods, "affine")]

			ginkgo.By("four Pods spread over the zones (maxSkew 1)")
			zones := map[string]int{}
			for _, name := range []string{"spread-0", "spread-1", "spread-2", "spread-3"} {
				p := newPod(name, "100m", "64Mi")
				p.Labels = map[string]string{"group": "spread"}
				f.TolerateSimulated(&p.Spec)
				p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
					MaxSkew: 1, TopologyKey: zoneLabel, WhenUnsatisfiable: corev1.DoNotSchedule,
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"group": "spread"}},
				}}
				createPod(ctx, f, p)
				// One at a time: each choice sees the ones before.
				node := boundTo(ctx, pods, name)
				zones[zoneOf(ctx, f, node)]++
			}
			framework.Evidence("scoring", map[string]any{
				"simulatedNodes":   true,
				"freePodOn":        freeNode,
				"affinePodOn":      affineNode,
				"spreadByZone":     zones,
				"spreadSkew":       abs(zones["zone-a"] - zones["zone-b"]),
				"busyNodeCPUsUsed": "3 of 4",
				"idleNodeCPUsUsed": "0.1 of 4",
			})
		})
})

func zoneOf(ctx context.Context, f *framework.Framework, node string) string {
	ginkgo.GinkgoHelper()
	n, err := f.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	framework.ExpectNoError(err, "read node %s", node)
	return n.Labels[zoneLabel]
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// requireNodeLabel gives p a required node affinity: the scheduler places
// it, on a node labelled key=value.
func requireNodeLabel(p *corev1.Pod, key, value string) {
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{value}}},
		}}},
	}}
}
