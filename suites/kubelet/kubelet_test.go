package kubelet

import (
	"strings"
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/metrics"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
	"github.com/kubeproof/kubeproof/kube/podsecurity/podsecuritytest"
)

// The test app's cgroup report is read on either cgroup version: memory in
// bytes, CPU in cores (quota over period), -1 for none or for what does
// not parse; output that is not the app's is an error that quotes it.
func TestParseCgroup(t *testing.T) {
	v2 := parseCgroup(`{"version":"v2","files":{"memory.max":"67108864\n","cpu.max":"50000 100000"}}`)
	if v2.MemoryLimitBytes != 64<<20 || v2.CPULimitCores != 0.5 || v2.Error != "" {
		t.Errorf("v2 %+v", v2)
	}
	if got := parseCgroup(`{"version":"v2","files":{"memory.max":"max","cpu.max":"max 100000"}}`); got.MemoryLimitBytes != -1 || got.CPULimitCores != -1 {
		t.Errorf("v2 without limits %+v", got)
	}
	v1 := parseCgroup(`{"version":"v1","files":{"memory/memory.limit_in_bytes":"134217728","cpu,cpuacct/cpu.cfs_quota_us":"20000","cpu,cpuacct/cpu.cfs_period_us":"100000"}}`)
	if v1.MemoryLimitBytes != 128<<20 || v1.CPULimitCores != 0.2 {
		t.Errorf("v1 %+v", v1)
	}
	if got := parseCgroup(`{"version":"v1","files":{"cpu/cpu.cfs_quota_us":"-1","cpu/cpu.cfs_period_us":"100000"}}`); got.CPULimitCores != -1 {
		t.Errorf("v1 unlimited CPU %+v", got)
	}
	if bad := parseCgroup("exec failed"); !strings.HasSuffix(bad.Error, ": exec failed") || bad.MemoryLimitBytes != -1 || bad.CPULimitCores != -1 {
		t.Errorf("not the app's output %+v", bad)
	}
}

// What the kubelet specs read of Pods and metrics: the runtime's
// containers by kind, a container's start and waiting reason, the change
// of a metric, whether two address sets are one.
func TestPodReadings(t *testing.T) {
	if got := kinds([]framework.RuntimeContainer{{Kind: "sandbox"}, {Kind: "container", Name: "app"}}); strings.Join(got, ",") != "sandbox,container:app" {
		t.Errorf("kinds %v", got)
	}
	waiting := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}}}
	if waitingReason(waiting) != "ContainerCreating" || waitingReason(nil) != "" || anyStarted(waiting) {
		t.Errorf("a waiting Pod: %q %t", waitingReason(waiting), anyStarted(waiting))
	}
	at := metav1.Unix(100, 0)
	running := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}}}}}}
	if got, zero := startedAt(running), startedAt(waiting); !anyStarted(running) || !got.Equal(&at) || !zero.IsZero() {
		t.Error("a running Pod's start")
	}
	restarted := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}}}}
	if !anyStarted(restarted) {
		t.Error("a container that ran before its restart has started")
	}
	before := metrics.Parse([]byte("kubelet_runtime_operations_total{operation_type=\"create_container\"} 3\n"))
	after := metrics.Parse([]byte("kubelet_runtime_operations_total{operation_type=\"create_container\"} 5\nkubelet_runtime_operations_total{operation_type=\"start_container\"} 2\n"))
	if got := delta(before, after, "kubelet_runtime_operations_total", map[string]string{"operation_type": "create_container"}); got != 2 {
		t.Errorf("delta %v", got)
	}
	a := map[string][]string{"eth0": {"10.244.0.5"}}
	if !sameAddrs(a, map[string][]string{"eth0": {"10.244.0.5"}}) || sameAddrs(a, map[string][]string{"eth0": {"10.244.0.6"}}) || sameAddrs(nil, nil) {
		t.Error("sameAddrs")
	}
	if firstLine("\n  one\ntwo") != "one" {
		t.Error("firstLine")
	}
}

// The static Pod kubeproof writes on a node is a Pod of the namespace and
// label given, whose container passes the restricted Pod Security level.
func TestStaticManifest(t *testing.T) {
	gomega.RegisterTestingT(t) // staticManifest asserts as a spec does
	var p corev1.Pod
	if err := yaml.UnmarshalStrict([]byte(staticManifest("kp-ns", "abc")), &p); err != nil {
		t.Fatal(err)
	}
	if p.Kind != "Pod" || p.Namespace != "kp-ns" || p.Labels["kubeproof.io/static"] != "abc" || len(p.Spec.Containers) != 1 {
		t.Errorf("static Pod %+v", p.ObjectMeta)
	}
	podsecuritytest.Passes(t, "the static Pod", podsecurity.LevelRestricted, p.ObjectMeta, p.Spec)
	c := container("app", 8080, "--on-term", "ignore")
	if strings.Join(c.Args, " ") != "serve --listen=:8080 --on-term ignore" || c.Ports[0].ContainerPort != 8080 {
		t.Errorf("container %+v", c)
	}
	if p := httpProbe("/readyz", 8080); p.HTTPGet.Path != "/readyz" || p.HTTPGet.Port.IntVal != 8080 || p.PeriodSeconds != 1 {
		t.Errorf("probe %+v", p)
	}
}
