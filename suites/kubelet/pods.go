package kubelet

import (
	"context"
	"strconv"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/framework"
)

// container is a test-app container serving on port.
func container(name string, port int32, args ...string) corev1.Container {
	return corev1.Container{
		Name: name, Image: images.TestApp.PodRef(),
		Args:      append([]string{"serve", "--listen=:" + strconv.Itoa(int(port))}, args...),
		Ports:     []corev1.ContainerPort{{ContainerPort: port}},
		Env:       []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
		Resources: framework.Resources("100m", "64Mi"),
	}
}

func httpProbe(path string, port int32) *corev1.Probe {
	return &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 3, ProbeHandler: corev1.ProbeHandler{
		HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(port)}}}
}

func createPod(ctx context.Context, f *framework.Framework, p *corev1.Pod) {
	ginkgo.GinkgoHelper()
	_, err := f.Client.CoreV1().Pods(f.Namespace).Create(ctx, p, metav1.CreateOptions{})
	framework.ExpectNoError(err, "create Pod %s", p.Name)
}
