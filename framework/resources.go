package framework

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Resources are the requests of the specs' own containers, cpu and memory,
// with memory as the only limit. Requests place a Pod; a CPU limit would
// also throttle the container runtime: runc sets a container up from inside
// its cgroup, so its own work is charged to the container's CPU quota (at
// 100m, each sandbox and container took about 0.5 s longer to start on a
// 2-core VM). Specs about CPU limits set one themselves.
func Resources(cpu, memory string) corev1.ResourceRequirements {
	mem := resource.MustParse(memory)
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: mem},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: mem},
	}
}
