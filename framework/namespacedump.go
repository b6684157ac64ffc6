package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kubeproof/kubeproof/claims/record"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// keptLabel marks a failed spec's namespace kept with
// --kubeproof.keep-namespaces-on-failure: the suite does not wait for it.
const keptLabel = "kubeproof.io/kept"

// dumpNamespace writes, for a spec that failed, what its namespace held:
// its events, its Pods and their state, and the nodes they were on, to
// failures/<namespace>.txt in the report directory (as the Kubernetes e2e
// framework dumps a namespace). The component logs come with the run's
// report (kubeproof exports them when a spec failed).
func (f *Framework) dumpNamespace(ctx context.Context) {
	var b strings.Builder
	fmt.Fprintf(&b, "spec %s failed: %s\n\n", CurrentSpecID(), ginkgo.CurrentSpecReport().Failure.Message)
	events, err := f.Client.CoreV1().Events(f.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Fprintf(&b, "events: %v\n", err)
	} else {
		sort.Slice(events.Items, func(i, j int) bool { return eventTime(events.Items[i]).Time.Before(eventTime(events.Items[j]).Time) })
		fmt.Fprintf(&b, "events of namespace %s:\n", f.Namespace)
		for _, e := range events.Items {
			fmt.Fprintf(&b, "  %s %-7s %-20s %s/%s: %s\n", eventTime(e).Format("15:04:05.000"), e.Type, e.Reason,
				strings.ToLower(e.InvolvedObject.Kind), e.InvolvedObject.Name, e.Message)
		}
	}
	pods, err := f.Client.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{})
	nodes := map[string]bool{}
	if err != nil {
		fmt.Fprintf(&b, "\npods: %v\n", err)
	} else {
		fmt.Fprintf(&b, "\npods:\n")
		for i := range pods.Items {
			fmt.Fprintf(&b, "  %s\n", DescribePod(&pods.Items[i]))
			if n := pods.Items[i].Spec.NodeName; n != "" {
				nodes[n] = true
			}
		}
	}
	for n := range nodes {
		node, err := f.Client.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			fmt.Fprintf(&b, "\nnode %s: %v\n", n, err)
			continue
		}
		fmt.Fprintf(&b, "\nnode %s:", n)
		for _, c := range node.Status.Conditions {
			fmt.Fprintf(&b, " %s=%s", c.Type, c.Status)
		}
		b.WriteString("\n")
	}
	path := filepath.Join(TestContext.ReportDir, "failures", f.Namespace+".txt")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err == nil && os.WriteFile(path, []byte(b.String()), 0o644) == nil {
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		writeRecord(record.Record{Kind: record.DumpRecord, Dump: path}, ginkgo.ReportEntryVisibilityNever)
	}
}

func eventTime(e corev1.Event) metav1.Time {
	if !e.LastTimestamp.IsZero() {
		return e.LastTimestamp
	}
	if !e.EventTime.IsZero() {
		return metav1.NewTime(e.EventTime.Time)
	}
	return e.FirstTimestamp
}

// keepNamespace labels a failed spec's namespace kept instead of deleting
// it, so that its objects can be looked at; `kubeproof cleanup` (or
// deleting the namespace) removes it.
func (f *Framework) keepNamespace(ctx context.Context) error {
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"true"}}}`, keptLabel)
	_, err := f.Client.CoreV1().Namespaces().Patch(ctx, f.Namespace, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err == nil {
		ginkgo.By(fmt.Sprintf("keeping namespace %s of the failed spec", f.Namespace))
	}
	return err
}
