package scheduler

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeproof/kubeproof/framework"
)

// The scoring spec's own node labels: a zone (the topology key of its
// spread constraint) and a disk kind (for node affinity). Its own keys, not
// the well-known zone label, so that labelling real nodes changes nothing
// for other specs.
const (
	zoneLabel = "score.kubeproof.io/zone"
	diskLabel = "score.kubeproof.io/disk"
)

const specScoring = "scheduler-scoring"

var _ = ginkgo.Describe("Scheduler scoring", func() {
	f := framework.New("score")

	ginkgo.It("among feasible nodes: the less allocated is preferred, node affinity and topology spread are honoured",
		framework.Checks(specScoring, framework.Disturbs("labels real Nodes, or adds simulated ones")),
		func(ctx ginkgo.SpecContext) {
			pods := f.RecordPods(ctx)
			n := pickScoringNodes(ctx, f)
			role := map[string]string{n.busy: "busy", n.idle: "idle", "": "unbound"}
			tolerate := func(p *corev1.Pod) *corev1.Pod {
				if n.simulated {
					f.TolerateSimulated(&p.Spec)
				}
				return p
			}
			ev := scoringEvidence{SimulatedNodes: n.simulated, BusyFreeMilliCPU: n.free[n.busy] - n.fillerCPU.MilliValue(),
				IdleFreeMilliCPU: n.free[n.idle] - 100, FillerMilliCPU: n.fillerCPU.MilliValue(), NodesComparedAtOnce: 2,
				FreePodOn: role[""], AffinePodOn: role[""]}
			// unbound records what was seen and stops: the scheduler did
			// not bind a Pod it could place.
			unbound := func(name string) {
				scoring.Record(ev)
				framework.Unmet("kube-scheduler", "Pod "+name+" was bound to a node", "not bound within "+framework.Timeout.Bind.String())
			}

			// Both nodes get their first Pod through the scheduler, pinned by
			// hostname: once those are bound, the scheduler's cache holds both
			// nodes and the filler's requests. (A Pod created with nodeName
			// can reach the cache after the next Pod is scored.)
			ginkgo.By(fmt.Sprintf("occupying %s CPU of the busy node and 0.1 of the idle node's", n.fillerCPU.String()))
			filler := tolerate(newPod("filler", n.fillerCPU.String(), "64Mi"))
			requireNodeLabel(filler, corev1.LabelHostname, hostname(ctx, f, n.busy))
			createPod(ctx, f, filler)
			marker := tolerate(newPod("marker", "100m", "64Mi"))
			requireNodeLabel(marker, corev1.LabelHostname, hostname(ctx, f, n.idle))
			createPod(ctx, f, marker)
			if b := bindings(ctx, pods, "filler", "marker"); len(b) < 2 {
				unbound("filler or marker")
			}

			ginkgo.By("a Pod both nodes fit")
			free := tolerate(newPod("free", "100m", "64Mi"))
			requireNodeLabel(free, diskLabel, "hdd", "ssd")
			createPod(ctx, f, free)
			ev.FreePodOn = role[bindings(ctx, pods, "free")["free"]]

			ginkgo.By("a Pod that requires the busy node's label (node affinity)")
			affine := tolerate(newPod("affine", "100m", "64Mi"))
			requireNodeLabel(affine, diskLabel, "hdd")
			createPod(ctx, f, affine)
			ev.AffinePodOn = role[bindings(ctx, pods, "affine")["affine"]]
			if ev.FreePodOn == "unbound" || ev.AffinePodOn == "unbound" {
				unbound("free or affine")
			}

			ginkgo.By("four Pods spread over the zones (maxSkew 1)")
			ev.SpreadByZone = map[string]int{}
			for _, name := range []string{"spread-0", "spread-1", "spread-2", "spread-3"} {
				p := tolerate(newPod(name, "50m", "32Mi"))
				p.Labels = map[string]string{"group": "spread"}
				requireNodeLabel(p, diskLabel, "hdd", "ssd")
				p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
					MaxSkew: 1, TopologyKey: zoneLabel, WhenUnsatisfiable: corev1.DoNotSchedule,
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"group": "spread"}},
				}}
				createPod(ctx, f, p)
				// One at a time: each choice sees the ones before.
				node := bindings(ctx, pods, name)[name]
				if node == "" {
					unbound(name)
				}
				ev.SpreadByZone[zoneOf(ctx, f, node)]++
			}
			skew := abs(ev.SpreadByZone["zone-a"] - ev.SpreadByZone["zone-b"])
			ev.SpreadSkew = &skew
			scoring.Record(ev)
		})
})

// pickScoringNodes uses two real worker nodes when the cluster has them
// (kind), labelled for the spec and filled so that one has far less room;
// otherwise two simulated nodes of 4 CPUs, 3 of them filled on one.
func pickScoringNodes(ctx context.Context, f *framework.Framework) scoringNodes {
	ginkgo.GinkgoHelper()
	workers := f.WorkerNodes(ctx)
	if len(workers) < 2 {
		busy := f.SimulatedNode(ctx, "busy", framework.SimNode{CPU: "4", Memory: "8Gi",
			Labels: map[string]string{zoneLabel: "zone-a", diskLabel: "hdd"}})
		idle := f.SimulatedNode(ctx, "idle", framework.SimNode{CPU: "4", Memory: "8Gi",
			Labels: map[string]string{zoneLabel: "zone-b", diskLabel: "ssd"}})
		return scoringNodes{busy: busy.Name, idle: idle.Name, simulated: true, fillerCPU: resource.MustParse("3"),
			free: map[string]int64{busy.Name: 4000, idle.Name: 4000}}
	}
	n := scoringNodes{busy: workers[0].Name, idle: workers[1].Name, free: map[string]int64{}}
	for node, labels := range map[string]map[string]string{
		n.busy: {zoneLabel: "zone-a", diskLabel: "hdd"},
		n.idle: {zoneLabel: "zone-b", diskLabel: "ssd"},
	} {
		labelNode(ctx, f, node, labels)
		n.free[node] = freeMilliCPU(ctx, f, node)
	}
	// Leave the busy node 500m: room for the affine and spread Pods, far
	// less than the idle node keeps.
	filler := n.free[n.busy] - 500
	if filler < 100 || n.free[n.idle] < 1000 {
		ginkgo.Fail(fmt.Sprintf("the workers have too little free CPU to compare (busy %dm, idle %dm free)", n.free[n.busy], n.free[n.idle]))
	}
	n.fillerCPU = *resource.NewMilliQuantity(filler, resource.DecimalSI)
	return n
}

// labelNode sets labels on a real node until the spec ends.
func labelNode(ctx context.Context, f *framework.Framework, node string, labels map[string]string) {
	ginkgo.GinkgoHelper()
	patch := func(ctx context.Context, value func(string) any) error {
		l := map[string]any{}
		for k, v := range labels {
			l[k] = value(v)
		}
		data, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": l}})
		if err != nil {
			return err
		}
		_, err = f.Client.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, data, metav1.PatchOptions{})
		return err
	}
	framework.ExpectNoError(patch(ctx, func(v string) any { return v }), "label node %s", node)
	ginkgo.DeferCleanup(func(ctx context.Context) error {
		return patch(ctx, func(string) any { return nil })
	})
}

// freeMilliCPU is a node's allocatable CPU minus what its Pods request.
func freeMilliCPU(ctx context.Context, f *framework.Framework, node string) int64 {
	ginkgo.GinkgoHelper()
	n, err := f.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	framework.ExpectNoError(err, "read node %s", node)
	pods, err := f.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String()})
	framework.ExpectNoError(err, "list the Pods of node %s", node)
	free := n.Status.Allocatable.Cpu().MilliValue()
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, c := range p.Spec.Containers {
			free -= c.Resources.Requests.Cpu().MilliValue()
		}
	}
	return free
}

func hostname(ctx context.Context, f *framework.Framework, node string) string {
	ginkgo.GinkgoHelper()
	n, err := f.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	framework.ExpectNoError(err, "read node %s", node)
	return n.Labels[corev1.LabelHostname]
}

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
// it on a node whose label key has one of values.
func requireNodeLabel(p *corev1.Pod, key string, values ...string) {
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}},
		}}},
	}}
}

// Evidence: what the specs above record, under the names the claims files use.

// scoringNodes are the two nodes the scoring spec compares.
type scoringNodes struct {
	busy, idle string
	simulated  bool
	// fillerCPU is what the filler Pod requests on the busy node.
	fillerCPU resource.Quantity
	// free is each node's unrequested CPU before the filler, in millicores.
	free map[string]int64
}

// Where the scheduler put each Pod, by node role ("busy", "idle"; "unbound"
// for a Pod it did not bind within its window).
type scoringEvidence struct {
	// SimulatedNodes: the two nodes are Node objects without a kubelet (the
	// cluster had too few worker nodes).
	SimulatedNodes bool `json:"simulatedNodes"`
	// FreePodOn is where a Pod both nodes fit went: "busy", "idle" or
	// "unbound".
	FreePodOn string `json:"freePodOn"`
	// AffinePodOn is where a Pod requiring the busy node's label went.
	AffinePodOn string `json:"affinePodOn"`
	// SpreadByZone counts, by zone, the four Pods spread with maxSkew 1;
	// SpreadSkew is the difference between zone-a and zone-b.
	SpreadByZone map[string]int `json:"spreadByZone"`
	SpreadSkew   *int           `json:"spreadSkew,omitempty"`
	// BusyFreeMilliCPU and IdleFreeMilliCPU are each node's unrequested CPU
	// once the filler (busy) and the marker (idle, 100m) were bound.
	BusyFreeMilliCPU int64 `json:"busyFreeMilliCPU"`
	IdleFreeMilliCPU int64 `json:"idleFreeMilliCPU"`
	// FillerMilliCPU is the CPU the filler Pod requests on the busy node.
	FillerMilliCPU int64 `json:"fillerMilliCPU"`
	// NodesComparedAtOnce is how many nodes each Pod could go to (2).
	NodesComparedAtOnce int `json:"nodesComparedAtOnce"`
}

var scoring = framework.DeclareEvidence[scoringEvidence]("scoring", specScoring)
