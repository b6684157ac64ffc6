// Package bench measures what kubeproof's benchmarks report: how long a
// cluster takes to come up and go, how long Pods take to start by the SIG
// scalability definition, and what the harness itself costs per spec. It
// measures; it never judges (no thresholds, no timed assertions). Run
// drives `kubeproof bench` (clusters through the engine, internal/runner;
// a whole command timed in a shell), Write writes bench.json and bench.md.
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeproof/kubeproof/contract/ownership"
	"github.com/kubeproof/kubeproof/internal/judge"
	"github.com/kubeproof/kubeproof/internal/tools/trace"
	"github.com/kubeproof/kubeproof/kube/namespace"
	"github.com/kubeproof/kubeproof/kube/observe"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
	"github.com/kubeproof/kubeproof/kube/podstate"
)

// Distribution summarises measurements in milliseconds.
type Distribution struct {
	N    int     `json:"n"`
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// Summarize computes a distribution of values (milliseconds).
func Summarize(values []float64) Distribution {
	if len(values) == 0 {
		return Distribution{}
	}
	sorted := append([]float64(nil), values...)
	sort.Float64s(sorted)
	sum := 0.0
	for _, v := range sorted {
		sum += v
	}
	return Distribution{N: len(sorted), Min: sorted[0], Mean: sum / float64(len(sorted)),
		P50: trace.Quantile(sorted, 0.50), P90: trace.Quantile(sorted, 0.90), P99: trace.Quantile(sorted, 0.99),
		Max: sorted[len(sorted)-1]}
}

// PodStartup creates n Pods running image, one after another as fast as
// the API server takes them, in a namespace of its own, and returns each
// Pod's startup latency as SIG scalability defines it: from the Pod's
// creation to all its containers running, as observed through a watch.
// Both ends are read on this machine's clock (the create call and the
// watch event's receipt); the image is already on the nodes, so no pull
// is timed.
func PodStartup(ctx context.Context, client kubernetes.Interface, n int, image string, timeout time.Duration) ([]float64, error) {
	ns, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "kp-bench-", Labels: map[string]string{"kubeproof.io/bench": "true", ownership.Label: "bench"}}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create the benchmark namespace: %w", err)
	}
	defer func() { _ = namespace.Delete(context.WithoutCancel(ctx), client, ns.Name, 5*time.Minute) }()
	if err := waitDefaultServiceAccount(ctx, client, ns.Name); err != nil {
		return nil, err
	}
	rec, err := observe.Record(ctx, cache.NewListWatchFromClient(client.CoreV1().RESTClient(), "pods", ns.Name, fields.Everything()))
	if err != nil {
		return nil, fmt.Errorf("watch Pods: %w", err)
	}
	defer rec.Stop()

	created := map[string]time.Time{}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("startup-%03d", i)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "startup"}},
			Spec: podsecurity.Restricted(corev1.PodSpec{
				Containers:                    []corev1.Container{{Name: "app", Image: image, Args: []string{"serve"}, ImagePullPolicy: corev1.PullIfNotPresent}},
				TerminationGracePeriodSeconds: new(int64),
			})}
		created[name] = time.Now()
		if _, err := client.CoreV1().Pods(ns.Name).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("create Pod %s: %w", name, err)
		}
	}
	started := map[string]time.Time{}
	_, err = rec.WaitFor(ctx, timeout, fmt.Sprintf("all containers of %d Pods running", n), func(es []observe.Event) bool {
		for _, e := range es {
			p, ok := e.Object.(*corev1.Pod)
			if !ok || !podstate.AllRunning(p.Status.ContainerStatuses, len(p.Spec.Containers)) {
				continue
			}
			if _, seen := started[p.Name]; !seen {
				started[p.Name] = e.Received
			}
		}
		return len(started) >= n
	}, func(e observe.Event) string {
		return fmt.Sprintf("%d of %d Pods with all containers running", len(started), n)
	})
	if err != nil {
		return nil, err
	}
	var out []float64
	for name, t := range started {
		out = append(out, float64(t.Sub(created[name]).Microseconds())/1000)
	}
	return out, nil
}

func waitDefaultServiceAccount(ctx context.Context, client kubernetes.Interface, ns string) error {
	lw := cache.NewFilteredListWatchFromClient(client.CoreV1().RESTClient(), "serviceaccounts", ns, func(o *metav1.ListOptions) {
		o.FieldSelector = observe.NameSelector("default")
	})
	_, err := observe.Until(ctx, time.Minute, "the default ServiceAccount of namespace "+ns, lw,
		func(*corev1.ServiceAccount) (bool, error) { return true, nil }, nil)
	return err
}

// SpecOverhead reads a Ginkgo JSON report written by kubeproof's spec
// runner and returns, over the specs that ran, the harness's setup and
// teardown time and each spec's whole run time (milliseconds).
func SpecOverhead(path, setupEntry, teardownEntry string) (setup, teardown, runTime []float64, err error) {
	run, err := judge.LoadGinkgoReport(path)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, s := range run.Specs {
		if s.State != "passed" && s.State != "failed" {
			continue
		}
		runTime = append(runTime, s.Seconds*1000)
		if v, ok := s.Entries[setupEntry].(float64); ok {
			setup = append(setup, v)
		}
		if v, ok := s.Entries[teardownEntry].(float64); ok {
			teardown = append(teardown, v)
		}
	}
	return setup, teardown, runTime, nil
}

// FinalWaitMs reads a Ginkgo JSON report and returns how long the suite's
// end took: the SynchronizedAfterSuite, in which kubeproof waits for every
// namespace of the run to be gone (0 if the report has none).
func FinalWaitMs(path string) (float64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil {
		return 0, fmt.Errorf("parse %s: %w", path, err)
	}
	longest := time.Duration(0)
	for _, r := range reports {
		for _, s := range r.SpecReports {
			if s.LeafNodeType == types.NodeTypeSynchronizedAfterSuite && s.RunTime > longest {
				longest = s.RunTime
			}
		}
	}
	return float64(longest) / float64(time.Millisecond), nil
}

// PeakRSSMiB is a running process's peak resident memory (VmHWM), in MiB.
func PeakRSSMiB(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("peak memory of pid %d: %w", pid, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			if err != nil {
				return 0, fmt.Errorf("peak memory of pid %d: %q: %w", pid, line, err)
			}
			return kib / 1024, nil
		}
	}
	return 0, fmt.Errorf("peak memory of pid %d: no VmHWM (a kernel thread?)", pid)
}

// SelfPeakRSSMiB is this process's peak resident memory, and
// ChildrenPeakRSSMiB the largest of its ended, waited-for descendants' (for
// the spec runner: Ginkgo and its parallel spec processes), in MiB.
func SelfPeakRSSMiB() float64 { return maxRSS(syscall.RUSAGE_SELF) }

// ChildrenPeakRSSMiB: see SelfPeakRSSMiB.
func ChildrenPeakRSSMiB() float64 { return maxRSS(syscall.RUSAGE_CHILDREN) }

func maxRSS(who int) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024 // KiB on Linux
}
