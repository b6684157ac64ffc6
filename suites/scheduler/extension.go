package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/metrics"
)

// The spec of this file.
const specExtensionPoints = "scheduler-extension-points"

// The scheduling framework's extension points, in the order the seeds draw
// them, as the scheduler's metrics name them.
var extensionPoints = []string{"PreFilter", "Filter", "PostFilter", "PreScore", "Score", "Reserve", "Permit", "PreBind", "Bind", "PostBind"}

// extensionPointRuns is the scheduler's histogram of extension point
// durations: one sample each time a scheduling cycle runs one.
const extensionPointRuns = "scheduler_framework_extension_point_duration_seconds_count"

var _ = ginkgo.Describe("Scheduling framework", func() {
	f := framework.New("sched-fw")

	ginkgo.It("runs a Pod through its extension points (PostFilter only when no node fits) with the score weights of its profile",
		framework.Checks(specExtensionPoints, framework.Disturbs("adds simulated Nodes")),
		func(ctx ginkgo.SpecContext) {
			const scheduler = "kube-scheduler"
			if _, err := f.ComponentGet(ctx, scheduler, "/metrics"); err != nil {
				extensionPointsRun.Unobservable("the scheduler's metrics cannot be read here: %v", err)
				scoreWeights.Unobservable("the scheduler's configuration cannot be read here: %v", err)
				return
			}
			if raw, err := f.ComponentGet(ctx, scheduler, "/configz"); err == nil {
				scoreWeights.Record(weightsOf(raw))
			} else {
				scoreWeights.Unobservable("the scheduler's /configz cannot be read: %v", err)
			}

			// Two simulated nodes both fit each Pod, so that the scheduler
			// scores (with one feasible node it binds without scoring).
			pods := f.RecordPods(ctx)
			var warm []string
			for _, n := range []string{"a", "b"} {
				node := f.SimulatedNode(ctx, n, framework.SimNode{CPU: "4", Memory: "8Gi"})
				// A Pod only this node fits: once both are bound, the
				// scheduler's cache holds both nodes, and every Pod below
				// has two feasible nodes to score.
				p := newPod("warm-"+n, "100m", "64Mi")
				f.TolerateSimulated(&p.Spec)
				p.Spec.NodeSelector = map[string]string{corev1.LabelHostname: node.Name}
				createPod(ctx, f, p)
				warm = append(warm, p.Name)
			}
			if len(bindings(ctx, pods, warm...)) < len(warm) {
				framework.Unmet(scheduler, "the scheduler bound a Pod to each of two new nodes", "not both bound within "+framework.Timeout.Bind.String())
			}
			scrape := func(ctx context.Context) (metrics.Samples, error) {
				raw, err := f.ComponentGet(ctx, scheduler, "/metrics")
				return metrics.Parse(raw), err
			}
			counters := make([]func(metrics.Samples) float64, len(extensionPoints))
			for i, p := range extensionPoints {
				counters[i] = framework.Counter(extensionPointRuns, map[string]string{"extension_point": p, "profile": "default-scheduler"})
			}
			n := 0
			schedule := func(fits bool) func() error {
				return func() error {
					n++
					p := newPod(fmt.Sprintf("pod-%d", n), "100m", "64Mi")
					f.TolerateSimulated(&p.Spec)
					p.Spec.NodeSelector = map[string]string{framework.SimulatedForLabel: f.Namespace}
					if !fits {
						p.Spec.NodeSelector["sched-fw.kubeproof.io/none"] = "true"
					}
					createPod(ctx, f, p)
					// A Pod that fits may first be judged before the
					// scheduler's informer has the new nodes: it is bound when
					// they arrive, within the window.
					if fits {
						if len(bindings(ctx, pods, p.Name)) == 0 {
							framework.Unmet(scheduler, "the scheduler bound Pod "+p.Name+", which two nodes fit", "not bound within "+framework.Timeout.Bind.String())
						}
					} else if d := decide(ctx, pods, p.Name); !d.Decided || d.Bound {
						framework.Unmet(scheduler, "the scheduler found no node for Pod "+p.Name, fmt.Sprintf("%+v", d))
					}
					return nil
				}
			}
			ev := extensionPointsEvidence{Runs: map[string]int{}, Trials: framework.GrowthTrials}
			// The binding cycle ends after the Pod is seen bound: Bind is
			// counted once the binding call returns, PostBind after it.
			// Both must have grown: other specs' Pods share the scheduler,
			// and their PostBind alone could end the wait before this
			// Pod's Bind is counted.
			at := func(point string) func(metrics.Samples) float64 {
				return counters[slices.Index(extensionPoints, point)]
			}
			bind, postBind := at("Bind"), at("PostBind")
			bound := func(before, after metrics.Samples) bool {
				return bind(after) > bind(before) && postBind(after) > postBind(before)
			}
			fitting := framework.LeastGrowthSettled(ctx, "schedule a Pod that fits", schedule(true), scrape, bound, counters...)
			for i, p := range extensionPoints {
				ev.Runs[p] = fitting[i]
				if fitting[i] > 0 {
					ev.Ran = append(ev.Ran, p)
				}
			}
			unfit := framework.LeastGrowth(ctx, "schedule a Pod no node fits", schedule(false), scrape, at("PostFilter"))
			ev.PostFilterWhenNoNodeFits = unfit[0]
			extensionPointsRun.Record(ev)
		})
})

// weightsOf reads the score plugins' weights of the default profile from
// the scheduler's /configz. Field names are matched without regard to case:
// the scheduler serves its internal configuration type.
func weightsOf(raw []byte) scoreWeightsEvidence {
	var cz struct {
		ComponentConfig struct {
			Profiles []struct {
				SchedulerName string `json:"schedulerName"`
				Plugins       struct {
					MultiPoint, Score struct {
						Enabled []struct {
							Name   string `json:"name"`
							Weight int    `json:"weight"`
						} `json:"enabled"`
					}
				} `json:"plugins"`
			} `json:"profiles"`
		} `json:"componentconfig"`
	}
	ev := scoreWeightsEvidence{Weights: map[string]int{}}
	if err := json.Unmarshal(raw, &cz); err != nil {
		ev.Error = err.Error()
		return ev
	}
	for _, p := range cz.ComponentConfig.Profiles {
		if p.SchedulerName != corev1.DefaultSchedulerName {
			continue
		}
		for _, pl := range append(p.Plugins.MultiPoint.Enabled, p.Plugins.Score.Enabled...) {
			if pl.Weight > 0 {
				ev.Weights[pl.Name] = pl.Weight
			}
		}
	}
	return ev
}

// Evidence: what the specs above record, under the names the claims files use.

// Which extension points the scheduler ran for one Pod, from its metrics:
// the least each count grew around one Pod that fits two nodes, over
// Trials Pods.
type extensionPointsEvidence struct {
	// Runs is, by extension point, how often the scheduler ran it (the
	// growth of the count of its duration histogram) while it scheduled a
	// Pod that fits: the least over Trials.
	Runs map[string]int `json:"runs"`
	// Ran are the extension points whose count grew, in the scheduling
	// cycle's order.
	Ran []string `json:"ran"`
	// PostFilterWhenNoNodeFits: the same for PostFilter around a Pod no
	// node fits.
	PostFilterWhenNoNodeFits int `json:"postFilterWhenNoNodeFits"`
	// Trials is how many Pods each count was read around.
	Trials int `json:"trials"`
}

// The weights of the default profile's score plugins, from /configz.
type scoreWeightsEvidence struct {
	// Weights are the default profile's score plugin weights, by plugin, from
	// the scheduler's /configz.
	Weights map[string]int `json:"weights"`
	// Error is why /configz could not be read, if it could not.
	Error string `json:"error,omitempty"`
}

var (
	extensionPointsRun = framework.DeclareEvidence[extensionPointsEvidence]("extensionPoints", specExtensionPoints)
	scoreWeights       = framework.DeclareEvidence[scoreWeightsEvidence]("scoreWeights", specExtensionPoints)
)
