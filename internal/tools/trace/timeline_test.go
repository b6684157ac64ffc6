package trace

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeproof/kubeproof/internal/report/realrun"
	"github.com/kubeproof/kubeproof/kube/audit"
	"github.com/kubeproof/kubeproof/webhooks"
)

// auditEvents reads a recorded audit log (testdata, captured from a real
// `kubeproof trace` on the local provider) through the audit package's own
// reader. The logs hold the whole trace namespace, the recorder webhook's
// Deployment and marker Pods included, so the stage selection must tell
// the traced objects from the harness's.
func auditEvents(t *testing.T, name, namespace string) []audit.Event {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	realrun.Gunzip(t, filepath.Join("testdata", name), path)
	events, err := audit.Open(path).Since(0, audit.InNamespace(namespace))
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// expectStages checks each wanted stage's milliseconds exactly: the stages
// are read from the same timestamps, so no tolerance is needed.
func expectStages(t *testing.T, got, want map[string]float64) {
	t.Helper()
	for name, w := range want {
		if g, ok := got[name]; !ok || g != w {
			t.Errorf("%s: got %v (recorded %v), want %v", name, g, ok, w)
		}
	}
}

func stageMs(t *testing.T, stages []Stage) map[string]float64 {
	t.Helper()
	got := map[string]float64{}
	for _, s := range stages {
		if s.Ms != nil {
			got[s.Name] = *s.Ms
		}
	}
	return got
}

// The expected values are the audit log's own timestamps, recomputed by
// hand from the raw lines (ms since the create's requestReceivedTimestamp).
func TestStagesFromAuditLogDeployment(t *testing.T) {
	events := auditEvents(t, "audit-deployment.jsonl.gz", "kp-trace-c4xjw")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "nginx-deployment-75cff554d5-g48mx", Namespace: "kp-trace-c4xjw"}}
	tl := timeline{
		w:      workload{kind: "Deployment", name: "nginx-deployment", replicas: 3},
		pod:    pod,
		events: events,
		calls: []webhooks.Call{
			{Kind: "Deployment", Operation: "CREATE", Name: "nginx-deployment", DryRun: true, Arrived: events[0].RequestReceivedTimestamp},
		},
	}
	got := stageMs(t, tl.stages())
	want := map[string]float64{
		"request received":        0,
		"persisted (201 Created)": 8.042,
		"ReplicaSet created":      15.818,
		"Pod created":             26.976,
		"Pod bound":               40.417,
		"kubelet acts on the Pod": 56.300,
		"containers running":      1100.465,
		"Ready":                   1157.704,
		"endpoint ready":          1197.301,
	}
	expectStages(t, got, want)
	// A dry-run call is not the create: admission stays untimed.
	if _, ok := got["admitted (mutating webhook called)"]; ok {
		t.Errorf("admitted timed from a dry-run webhook call")
	}
}

func TestStagesFromAuditLogPod(t *testing.T) {
	events := auditEvents(t, "audit-pod.jsonl.gz", "kp-trace-nllls")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "kp-trace-nllls"}}
	var top *audit.Event
	for i, e := range events {
		if e.Verb == "create" && e.ObjectRef.Resource == "pods" && e.ObjectRef.Name == "web" && e.ObjectRef.Subresource == "" {
			top = &events[i]
		}
	}
	if top == nil {
		t.Fatal("fixture has no create of Pod web")
	}
	tl := timeline{
		w:      workload{kind: "Pod", name: "web", replicas: 1},
		pod:    pod,
		events: events,
		calls: []webhooks.Call{{Kind: "Pod", Operation: "CREATE", Name: "web",
			Arrived: top.RequestReceivedTimestamp.Add(3773 * time.Microsecond)}},
		readySeen: top.RequestReceivedTimestamp.Add(938178 * time.Microsecond),
	}
	stages := tl.stages()
	got := stageMs(t, stages)
	want := map[string]float64{
		"request received":                   0,
		"admitted (mutating webhook called)": 3.773,
		"persisted (201 Created)":            7.568,
		"Pod bound":                          14.193,
		"kubelet acts on the Pod":            19.954,
		"containers running":                 852.966,
		"Ready":                              928.270,
		"endpoint ready":                     943.828,
	}
	expectStages(t, got, want)
	for _, s := range stages {
		if s.Name == "ReplicaSet created" || s.Name == "Pod created" {
			t.Errorf("a Pod manifest has no %q stage", s.Name)
		}
		if s.Name == "admitted (mutating webhook called)" && s.Source != SourceWebhook {
			t.Errorf("admitted from %q, want the webhook", s.Source)
		}
		if s.Name == "sandbox created" && s.Ms != nil {
			t.Errorf("sandbox timed with no runtime record and no condition")
		}
	}
}

func TestAdmittedOutsideTheCreateIsFlagged(t *testing.T) {
	events := auditEvents(t, "audit-pod.jsonl.gz", "kp-trace-nllls")
	tl := timeline{
		w:      workload{kind: "Pod", name: "web", replicas: 1},
		pod:    &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}},
		events: events,
		calls:  []webhooks.Call{{Kind: "Pod", Operation: "CREATE", Name: "web", Arrived: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)}},
	}
	found := false
	for _, s := range tl.stages() {
		if s.Name == "admitted (mutating webhook called)" {
			found = true
			if want := "outside the create's audit window"; !strings.Contains(s.Note, want) {
				t.Errorf("note %q does not say %q", s.Note, want)
			}
		}
	}
	if !found {
		t.Fatal("no admitted stage")
	}
}
