package kubelet

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/access"
	"github.com/kubeproof/kubeproof/kube/metrics"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
)

// The spec of this file.
const specCRI = "kubelet-cri"

// The kubelet's instrumented CRI client counts and times each call it makes
// to the runtime, by operation_type (pkg/kubelet/kuberuntime); its volume
// manager times each mount (storage_operation_duration_seconds).
const (
	runtimeCalls    = "kubelet_runtime_operations_total"
	runtimeDuration = "kubelet_runtime_operations_duration_seconds"
	storageDuration = "storage_operation_duration_seconds"
)

// The CRI calls of one Pod's start, as the kubelet names them.
var podStartCalls = []string{"run_podsandbox", "create_container", "start_container"}

var _ = ginkgo.Describe("Kubelet and the container runtime", func() {
	f := framework.New("kubelet-cri")

	ginkgo.It("starts a Pod through CRI calls to its runtime endpoint (sandbox, create, start), each timed",
		framework.Checks(specCRI),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.PodsReady)
			f.NeedsAccess(access.NodeProxy)
			rest := f.Client.CoreV1().RESTClient()
			node := f.WorkerNodes(ctx)[0]
			before, err := metrics.Kubelet(ctx, rest, node.Name)
			if err != nil {
				criCalls.Unobservable("the kubelet's metrics cannot be read through the API server: %v", err)
				runtimeSteps.Unobservable("the kubelet's metrics cannot be read through the API server: %v", err)
				return
			}
			pods := f.RecordPods(ctx)
			// On the node by nodeName: the kubelet alone acts on it. A
			// ConfigMap volume beside the ServiceAccount token's, as the
			// document's example mounts one.
			_, err = f.Client.CoreV1().ConfigMaps(f.Namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"},
				Data: map[string]string{"mode": "cri"}}, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create the ConfigMap the Pod mounts")
			app := container("app", 8080)
			app.VolumeMounts = []corev1.VolumeMount{{Name: "settings", MountPath: "/etc/settings"}}
			createPod(ctx, f, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "cri"}, Spec: podsecurity.Restricted(corev1.PodSpec{
				NodeName: node.Name, Containers: []corev1.Container{app},
				Volumes: []corev1.Volume{{Name: "settings", VolumeSource: corev1.VolumeSource{
					ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}}},
			})})
			framework.RunningPod(ctx, pods, "cri")
			after, err := metrics.Kubelet(ctx, rest, node.Name)
			framework.ExpectNoError(err, "read the kubelet's metrics after the Pod started")

			ev := criEvidence{Node: node.Name, RuntimeVersion: node.Status.NodeInfo.ContainerRuntimeVersion, Calls: map[string]float64{}}
			for _, op := range podStartCalls {
				ev.Calls[op] = delta(before, after, runtimeCalls, map[string]string{"operation_type": op})
			}
			ev.AllPodStartCalls = ev.Calls["run_podsandbox"] >= 1 && ev.Calls["create_container"] >= 1 && ev.Calls["start_container"] >= 1
			ev.KubeletVolumeMounts = delta(before, after, storageDuration+"_count", map[string]string{"operation_name": "volume_mount"})
			if endpoint, err := runtimeEndpoint(ctx, f, node.Name); err == nil {
				ev.Endpoint = endpoint
				ev.EndpointScheme, _, _ = strings.Cut(endpoint, "://")
			} else {
				ev.EndpointNote = err.Error()
			}
			criCalls.Record(ev)

			// Means over the calls of the window: other specs' Pods on the
			// node are started by the same kubelet and runtime, so they are
			// samples of the same steps.
			steps := runtimeStepsEvidence{}
			var missing []string
			mean := func(name, count string, match map[string]string, into *float64) {
				n := delta(before, after, count, match)
				if n < 1 {
					missing = append(missing, fmt.Sprintf("%s%v", name, match))
					return
				}
				*into = delta(before, after, name+"_sum", match) / n * 1000
			}
			mean(runtimeDuration, runtimeDuration+"_count", map[string]string{"operation_type": "run_podsandbox"}, &steps.RunPodSandboxMs)
			mean(runtimeDuration, runtimeDuration+"_count", map[string]string{"operation_type": "create_container"}, &steps.CreateContainerMs)
			mean(runtimeDuration, runtimeDuration+"_count", map[string]string{"operation_type": "start_container"}, &steps.StartContainerMs)
			mean(storageDuration, storageDuration+"_count", map[string]string{"operation_name": "volume_mount"}, &steps.VolumeMountMs)
			if len(missing) > 0 {
				runtimeSteps.Unobservable("the kubelet timed none of these while the Pod started: %s", strings.Join(missing, ", "))
				return
			}
			runtimeSteps.Record(steps)
		})
})

// delta is how much the samples named name (with labels match) grew.
func delta(before, after metrics.Samples, name string, match map[string]string) float64 {
	return after.Sum(name, match) - before.Sum(name, match)
}

// runtimeEndpoint reads the kubelet's containerRuntimeEndpoint from its
// /configz, through the API server's node proxy.
func runtimeEndpoint(ctx context.Context, f *framework.Framework, node string) (string, error) {
	raw, err := f.Client.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes/" + node + "/proxy/configz").DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("read the kubelet's configz on %s: %w", node, err)
	}
	var cz struct {
		KubeletConfig struct {
			ContainerRuntimeEndpoint string `json:"containerRuntimeEndpoint"`
		} `json:"kubeletconfig"`
	}
	if err := json.Unmarshal(raw, &cz); err != nil {
		return "", fmt.Errorf("decode the kubelet's configz on %s: %w", node, err)
	}
	return cz.KubeletConfig.ContainerRuntimeEndpoint, nil
}

// Evidence: what the specs above record, under the names the claims files use.

// The CRI calls the kubelet made while one Pod started, by the names its
// CRI client counts them under, and where it sends them.
type criEvidence struct {
	// Node is the node the Pod was bound to by nodeName.
	Node string `json:"node"`
	// Calls: how many calls of each kind the kubelet counted on that
	// node while the Pod started (other Pods' calls included).
	Calls map[string]float64 `json:"calls"`
	// AllPodStartCalls: run_podsandbox, create_container and start_container
	// were each counted at least once.
	AllPodStartCalls bool `json:"allPodStartCalls"`
	// Endpoint is the kubelet's containerRuntimeEndpoint (its configz).
	Endpoint string `json:"endpoint"`
	// EndpointScheme is that endpoint's scheme (e.g. unix); EndpointNote why
	// the endpoint could not be read, if it could not.
	EndpointScheme string `json:"endpointScheme"`
	EndpointNote   string `json:"endpointNote,omitempty"`
	// RuntimeVersion is what the runtime answered the kubelet's CRI
	// Version call with, as the node's status shows it.
	RuntimeVersion string `json:"runtimeVersion"`
	// KubeletVolumeMounts: the volume mounts the kubelet's own volume
	// manager made on the node while the Pod started (the Pod has two:
	// its ConfigMap and its ServiceAccount token's projected volume).
	KubeletVolumeMounts float64 `json:"kubeletVolumeMounts"`
}

// How long the runtime's steps took on the node, in the kubelet's own
// timings: mean milliseconds per call while the Pod started.
type runtimeStepsEvidence struct {
	// RunPodSandboxMs, CreateContainerMs and StartContainerMs are the
	// kubelet's mean durations of those runtime operations while the Pod
	// started (other Pods' on the node included).
	RunPodSandboxMs   float64 `json:"runPodSandboxMs"`
	CreateContainerMs float64 `json:"createContainerMs"`
	StartContainerMs  float64 `json:"startContainerMs"`
	// VolumeMountMs is its mean volume_mount duration then.
	VolumeMountMs float64 `json:"volumeMountMs"`
}

var (
	criCalls     = framework.DeclareEvidence[criEvidence]("cri", specCRI)
	runtimeSteps = framework.DeclareEvidence[runtimeStepsEvidence]("runtimeSteps", specCRI)
)
