// Package network observes what makes a Ready Pod reachable (seed 004):
// every Pod gets its own IP from the pod network and reaches the others by
// it; readiness decides whether a Pod is a ready endpoint of its Service;
// and kube-proxy sends Service traffic to ready endpoints only.
//
// Every check identifies the answering Pod by the content of its answer,
// never by a status code alone.
package network

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/images"
	"github.com/kubeproof/kubeproof/framework/observe"
)

func appPod(name string, labels map[string]string) *corev1.Pod {
	lim := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", Image: images.TestApp.Ref, Args: []string{"serve", "--listen=:8080"},
		Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
		Env:   []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
		ReadinessProbe: &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 1, SuccessThreshold: 1, ProbeHandler: corev1.ProbeHandler{
			HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(8080)}}},
		Resources: corev1.ResourceRequirements{Requests: lim, Limits: lim},
	}}}}
}

func startReady(ctx context.Context, f *framework.Framework, pods ...*corev1.Pod) map[string]*corev1.Pod {
	ginkgo.GinkgoHelper()
	rec := f.RecordPods(ctx)
	for _, p := range pods {
		_, err := f.Client.CoreV1().Pods(f.Namespace).Create(ctx, p, metav1.CreateOptions{})
		framework.ExpectNoError(err, "create Pod %s", p.Name)
	}
	out := map[string]*corev1.Pod{}
	for _, p := range pods {
		_, ready, _ := framework.WaitForPodEvent(ctx, rec, p.Name+" to be Ready", func(_ observe.Event, q *corev1.Pod) bool {
			return q.Name == p.Name && framework.PodReady(q)
		})
		out[p.Name] = ready
	}
	return out
}

var _ = ginkgo.Describe("Pod network", func() {
	f := framework.New("net")

	ginkgo.It("each Pod gets its own IP from the pod network, on its eth0, and Pods reach each other by IP",
		framework.Checks("network-pod-ips", "004-POD-IP-UNIQUE", "004-CNI-IPAM", "004-VETH"),
		func(ctx ginkgo.SpecContext) {
			pods := startReady(ctx, f, appPod("alpha", nil), appPod("beta", nil))
			a, b := pods["alpha"], pods["beta"]
			node, err := f.Client.CoreV1().Nodes().Get(ctx, a.Spec.NodeName, metav1.GetOptions{})
			framework.ExpectNoError(err, "read the node")
			inCIDR := func(ip string) bool {
				_, n, err := net.ParseCIDR(node.Spec.PodCIDR)
				return err == nil && n.Contains(net.ParseIP(ip))
			}
			ab := f.Fetch(ctx, "alpha", "", "http://"+b.Status.PodIP+":8080/", 3)
			ba := f.Fetch(ctx, "beta", "", "http://"+a.Status.PodIP+":8080/", 3)
			gomega.Expect(ab.Last).NotTo(gomega.BeNil(), "alpha could not reach beta: %s", ab.LastError)
			framework.Evidence("podIPs", map[string]any{
				"distinct": a.Status.PodIP != b.Status.PodIP, "inNodePodCIDR": inCIDR(a.Status.PodIP) && inCIDR(b.Status.PodIP),
				"alphaReachesBeta": ab.Responses["beta"] == 3, "betaReachesAlpha": ba.Responses["alpha"] == 3,
				"eth0HasPodIP": hasAddr(ab.Last.Interfaces["eth0"], b.Status.PodIP),
				"podCIDR":      node.Spec.PodCIDR,
			})
		})

	ginkgo.It("readiness decides the EndpointSlice, both ways, and the Service sends traffic to ready endpoints only",
		framework.Checks("network-readiness", "004-READINESS-ENDPOINTS", "004-KUBE-PROXY-TRAFFIC", "004-PROBE-FLOW"),
		func(ctx ginkgo.SpecContext) {
			labels := map[string]string{"app": "served"}
			_, err := f.Client.CoreV1().Services(f.Namespace).Create(ctx, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "served"},
				Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
			}, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create the Service")
			slices := f.Record(ctx, "EndpointSlices", cache.NewFilteredListWatchFromClient(f.Client.DiscoveryV1().RESTClient(), "endpointslices", f.Namespace,
				func(o *metav1.ListOptions) { o.LabelSelector = discoveryv1.LabelServiceName + "=served" }))
			pods := startReady(ctx, f, appPod("server-a", labels), appPod("server-b", labels), appPod("client", nil))
			svc, err := f.Client.CoreV1().Services(f.Namespace).Get(ctx, "served", metav1.GetOptions{})
			framework.ExpectNoError(err, "read the Service")
			url := "http://" + svc.Spec.ClusterIP + "/"
			b := pods["server-b"]

			waitEndpoint := func(what string, wantReady bool) time.Time {
				ginkgo.GinkgoHelper()
				events, err := slices.WaitFor(ctx, time.Minute, what, func(es []observe.Event) bool {
					r, ok := endpointReady(es, b.Status.PodIP)
					return ok && r == wantReady
				}, nil)
				framework.ExpectNoError(err, "wait for %s", what)
				return events[len(events)-1].Received
			}
			// kube-proxy applies endpoint changes on its own schedule; wait
			// until traffic follows, measuring how long that took.
			waitTraffic := func(what string, bServed bool) float64 {
				ginkgo.GinkgoHelper()
				began := time.Now()
				err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
					r := f.Fetch(ctx, "client", "", url, 10)
					return (r.Responses["server-b"] > 0) == bServed && r.Errors == 0, nil
				})
				framework.ExpectNoError(err, "wait for %s", what)
				return framework.Millis(time.Since(began))
			}

			ginkgo.By("both servers ready: both serve")
			waitEndpoint("server-b's endpoint to be ready", true)
			waitTraffic("traffic to reach server-b", true)
			both := f.Fetch(ctx, "client", "", url, 60)

			ginkgo.By("server-b's readiness probe starts failing")
			switched := time.Now()
			f.Fetch(ctx, "server-b", "", "http://localhost:8080/control?ready=false", 1)
			notReadyAt := waitEndpoint("server-b's endpoint to be not ready", false)
			proxyLagDown := waitTraffic("traffic to leave server-b", false)
			onlyA := f.Fetch(ctx, "client", "", url, 60)

			ginkgo.By("server-b's readiness probe passes again")
			switchedBack := time.Now()
			f.Fetch(ctx, "server-b", "", "http://localhost:8080/control?ready=true", 1)
			readyAt := waitEndpoint("server-b's endpoint to be ready again", true)
			proxyLagUp := waitTraffic("traffic to reach server-b again", true)
			again := f.Fetch(ctx, "client", "", url, 60)

			framework.Evidence("readiness", map[string]any{
				"notReadyInSliceAfterMs": framework.Millis(notReadyAt.Sub(switched)),
				"readyInSliceAfterMs":    framework.Millis(readyAt.Sub(switchedBack)),
				"notReadyAt":             notReadyAt.UTC().Format(time.RFC3339Nano),
				"readyAgainAt":           readyAt.UTC().Format(time.RFC3339Nano),
			})
			framework.Evidence("traffic", map[string]any{
				"bothReady":         fmt.Sprint(both.Responses),
				"bothServed":        both.Responses["server-a"] > 0 && both.Responses["server-b"] > 0,
				"whileBNotReady":    fmt.Sprint(onlyA.Responses),
				"onlyReadyServed":   onlyA.Responses["server-b"] == 0 && onlyA.Responses["server-a"] == onlyA.Requests,
				"afterBReadyAgain":  fmt.Sprint(again.Responses),
				"bothServedAgain":   again.Responses["server-a"] > 0 && again.Responses["server-b"] > 0,
				"proxyLagDownMs":    proxyLagDown,
				"proxyLagUpMs":      proxyLagUp,
				"unknownResponders": both.Errors + onlyA.Errors + again.Errors,
			})
		})
})

// endpointReady finds ip among the latest EndpointSlices and returns its
// ready condition.
func endpointReady(events []observe.Event, ip string) (bool, bool) {
	latest := map[string]*discoveryv1.EndpointSlice{}
	for _, e := range events {
		if s, ok := e.Object.(*discoveryv1.EndpointSlice); ok {
			latest[s.Name] = s
		}
	}
	for _, s := range latest {
		for _, ep := range s.Endpoints {
			for _, a := range ep.Addresses {
				if a == ip {
					return ep.Conditions.Ready != nil && *ep.Conditions.Ready, true
				}
			}
		}
	}
	return false, false
}

func hasAddr(addrs []string, ip string) bool {
	for _, a := range addrs {
		if ip != "" && len(a) > len(ip) && a[:len(ip)+1] == ip+"/" {
			return true
		}
	}
	return false
}
