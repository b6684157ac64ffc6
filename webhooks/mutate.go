package webhooks

import (
	"encoding/json"
	"strconv"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeproof/kubeproof/kube/podsecurity"
)

// Names of what the mutating handlers add.
const (
	SidecarName    = "kubeproof-proxy"
	InitName       = "kubeproof-init"
	FilledName     = "kubeproof-filled"
	DefaultedLabel = "kubeproof.io/defaulted"
	// DenyMessage is the policy validator's message, the seed's words.
	DenyMessage = "all containers must have resource limits"
)

// Image is the image of the containers the handlers add (set by the
// server's --image flag).
var Image = "kubeproof.local/testapp:v1"

// patchOp is one RFC 6902 JSON patch operation.
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

func patched(ops []patchOp) *admissionv1.AdmissionResponse {
	resp := &admissionv1.AdmissionResponse{Allowed: true}
	if len(ops) == 0 {
		return resp
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Code: 500, Message: err.Error()}}
	}
	pt := admissionv1.PatchTypeJSONPatch
	resp.Patch, resp.PatchType = data, &pt
	return resp
}

// container is a container the webhooks add to a Pod. It passes the
// restricted Pod Security Standard by itself, whatever the Pod sets: on a
// hardened cluster PodSecurity admission judges the Pod after mutation,
// and an injector must not make a Pod that passed fail.
func container(name string, args ...string) corev1.Container {
	return corev1.Container{Name: name, Image: Image, Args: args, Resources: smallResources(), SecurityContext: podsecurity.ContainerContext()}
}

// smallResources limits memory only: a CPU limit would throttle runc too,
// which sets the container up from inside its cgroup.
func smallResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
	}
}

// injectSidecar adds a proxy container and an init container, as a service
// mesh injector does.
func injectSidecar(pod *corev1.Pod) []patchOp {
	var ops []patchOp
	if !has(pod.Spec.Containers, SidecarName) {
		ops = append(ops, patchOp{Op: "add", Path: "/spec/containers/-", Value: container(SidecarName, "serve", "--listen=:15001")})
	}
	if !has(pod.Spec.InitContainers, InitName) {
		init := container(InitName, "cgroup")
		if len(pod.Spec.InitContainers) == 0 {
			ops = append(ops, patchOp{Op: "add", Path: "/spec/initContainers", Value: []corev1.Container{init}})
		} else {
			ops = append(ops, patchOp{Op: "add", Path: "/spec/initContainers/-", Value: init})
		}
	}
	return ops
}

// applyDefaults labels the Pod and gives containers without limits small
// requests and limits.
func applyDefaults(pod *corev1.Pod) []patchOp {
	ops := addLabel(pod, DefaultedLabel)
	for i, c := range pod.Spec.Containers {
		if len(c.Resources.Limits) == 0 {
			ops = append(ops, patchOp{Op: "add", Path: "/spec/containers/" + strconv.Itoa(i) + "/resources", Value: smallResources()})
		}
	}
	return ops
}

// fillContainers gives a Pod without containers one, so that the object
// passes schema validation only if mutation runs before it.
func fillContainers(pod *corev1.Pod) []patchOp {
	if len(pod.Spec.Containers) > 0 {
		return nil
	}
	return []patchOp{{Op: "add", Path: "/spec/containers", Value: []corev1.Container{container(FilledName, "serve")}}}
}

// addLabel sets label key=set unless the Pod has it.
func addLabel(pod *corev1.Pod, key string) []patchOp {
	if _, ok := pod.Labels[key]; ok {
		return nil
	}
	if len(pod.Labels) == 0 {
		return []patchOp{{Op: "add", Path: "/metadata/labels", Value: map[string]string{key: "set"}}}
	}
	return []patchOp{{Op: "add", Path: "/metadata/labels/" + escapePointer(key), Value: "set"}}
}

// requireLimits denies a Pod with a container without limits. code is the
// HTTP status to deny with, or "none" to let the API server choose.
func requireLimits(pod *corev1.Pod, code string) *admissionv1.AdmissionResponse {
	for _, c := range append(append([]corev1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if len(c.Resources.Limits) > 0 {
			continue
		}
		status := &metav1.Status{Message: DenyMessage}
		if n, err := strconv.Atoi(code); err == nil {
			status.Code = int32(n)
		}
		return &admissionv1.AdmissionResponse{Allowed: false, Result: status}
	}
	return &admissionv1.AdmissionResponse{Allowed: true}
}

func has(cs []corev1.Container, name string) bool {
	for _, c := range cs {
		if c.Name == name {
			return true
		}
	}
	return false
}

// escapePointer escapes a JSON pointer segment (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
