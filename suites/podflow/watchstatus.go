package podflow

import (
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/kubectl"
)

// The spec of this file.
const specWatchStatus = "podflow-watch-status"

// The Pod's scheduling gate: it holds the Pod before the scheduler until
// kubectl watches it, so that the watch sees every state from the start.
const watchGate = "kubeproof.io/wait-for-the-watch"

var _ = ginkgo.Describe("Pod status in kubectl", func() {
	f := framework.New("watch")

	ginkgo.It("kubectl get pods --watch shows the Pod Pending, then ContainerCreating, then Running 1/1",
		framework.Checks(specWatchStatus),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.PodsReady)
			pods := f.RecordPods(ctx)
			var p corev1.Pod
			framework.ExpectNoError(yaml.Unmarshal(framework.Manifest("pod.yaml"), &p), "read pod.yaml")
			p.Name = "watched"
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: watchGate}}
			_, err := f.Client.CoreV1().Pods(f.Namespace).Create(ctx, &p, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create the Pod behind a scheduling gate")

			lines, stop, err := f.Kubectl.Watch(ctx, "get", "pods", p.Name, "--namespace", f.Namespace, "--watch", "--no-headers")
			framework.ExpectNoError(err, "start kubectl get pods --watch")
			var seen []watchLine
			// next waits for kubectl's next line, within window.
			next := func(window time.Duration) bool {
				select {
				case l, ok := <-lines:
					if ok {
						seen = append(seen, parseWatchLine(l))
					}
					return ok
				case <-time.After(window):
					return false
				case <-ctx.Done():
					return false
				}
			}
			if !next(framework.Timeout.API) {
				stderr := stop()
				framework.Unmet("kubectl", "kubectl get pods --watch printed the Pod", "nothing within "+framework.Timeout.API.String()+"; stderr: "+stderr)
			}
			gated := len(seen)

			ginkgo.By("the scheduling gate removed: the Pod goes its way while kubectl watches")
			_, err = f.Client.CoreV1().Pods(f.Namespace).Patch(ctx, p.Name, types.MergePatchType, []byte(`{"spec":{"schedulingGates":null}}`), metav1.PatchOptions{})
			framework.ExpectNoError(err, "remove the scheduling gate")
			// kubectl shows what the cluster does; a Pod nobody binds says
			// nothing about kubectl.
			if bound := framework.AwaitPod(ctx, pods, p.Name, "the scheduler to bind the Pod", framework.Timeout.Bind, func(p *corev1.Pod) bool {
				return p.Spec.NodeName != ""
			}); !bound.OK {
				stop()
				framework.Unmet("kube-scheduler", "the Pod was bound once its scheduling gate was removed", "last seen: "+bound.LastSeen())
			}
			deadline := time.Now().Add(framework.Timeout.PodStart)
			for !runningReady(seen) && time.Now().Before(deadline) {
				if !next(time.Until(deadline)) {
					break
				}
			}
			stderr := stop()
			ev := watchStatusEvidence{BeforeGate: statuses(seen[:gated]), AfterGate: statuses(seen[gated:]), Stderr: strings.TrimSpace(stderr)}
			after := seen[gated:]
			pending, creating, running := indexOf(after, "Pending"), indexOf(after, "ContainerCreating"), indexOf(after, "Running")
			ev.SawPending, ev.SawContainerCreating, ev.SawRunning = pending >= 0, creating >= 0, running >= 0
			ev.InOrder = pending >= 0 && creating > pending && running > creating
			ev.EndsRunningReady = runningReady(after)
			watchStatus.Record(ev)
		})
})

// watchLine is one line of kubectl get pods: its READY and STATUS columns.
type watchLine struct{ ready, status string }

func parseWatchLine(l kubectl.Line) watchLine {
	cols := strings.Fields(l.Text)
	if len(cols) < 3 {
		return watchLine{}
	}
	return watchLine{ready: cols[1], status: cols[2]}
}

// statuses lists the STATUS column, a value again only when it changed.
func statuses(ls []watchLine) []string {
	var out []string
	for _, l := range ls {
		if len(out) == 0 || out[len(out)-1] != l.status {
			out = append(out, l.status)
		}
	}
	return out
}

func indexOf(ls []watchLine, status string) int {
	for i, l := range ls {
		if l.status == status {
			return i
		}
	}
	return -1
}

// runningReady: the last line says Running with every container ready.
func runningReady(ls []watchLine) bool {
	if len(ls) == 0 {
		return false
	}
	last := ls[len(ls)-1]
	ready, total, ok := strings.Cut(last.ready, "/")
	return last.status == "Running" && ok && ready == total
}

// Evidence: what the specs above record, under the names the claims files use.

// The STATUS column of kubectl get pods --watch for one Pod: while it was
// held by a scheduling gate, and from the gate's removal on.
type watchStatusEvidence struct {
	// BeforeGate and AfterGate are the STATUS column of kubectl get pods
	// --watch's lines before and after the scheduling gate was removed,
	// repeats merged.
	BeforeGate []string `json:"beforeGate"`
	AfterGate  []string `json:"afterGate"`
	// SawPending, SawContainerCreating and SawRunning: that status is among
	// the lines after the gate.
	SawPending           bool `json:"sawPending"`
	SawContainerCreating bool `json:"sawContainerCreating"`
	SawRunning           bool `json:"sawRunning"`
	// InOrder: Pending, ContainerCreating and Running came in this order.
	InOrder bool `json:"inOrder"`
	// EndsRunningReady: the last line is Running with every container ready.
	EndsRunningReady bool `json:"endsRunningReady"`
	// Stderr is kubectl's stderr, trimmed.
	Stderr string `json:"stderr,omitempty"`
}

var watchStatus = framework.DeclareEvidence[watchStatusEvidence]("watchStatus", specWatchStatus)
