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
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/contract/testapp"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/observe"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
)

func appPod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: podsecurity.Restricted(corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", Image: images.TestApp.PodRef(), Args: []string{"serve", "--listen=:8080"},
		Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
		Env:   []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
		ReadinessProbe: &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 1, SuccessThreshold: 1, ProbeHandler: corev1.ProbeHandler{
			HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(8080)}}},
		Resources: framework.Resources("100m", "64Mi"),
	}}})}
}

// startReady creates the Pods and waits until each is Ready.
func startReady(ctx context.Context, f *framework.Framework, rec *observe.Recorder, pods ...*corev1.Pod) map[string]framework.Seen {
	ginkgo.GinkgoHelper()
	for _, p := range pods {
		_, err := f.Client.CoreV1().Pods(f.Namespace).Create(ctx, p, metav1.CreateOptions{})
		framework.ExpectNoError(err, "create Pod %s", p.Name)
	}
	out := map[string]framework.Seen{}
	for _, p := range pods {
		out[p.Name] = framework.ReadyPod(ctx, rec, p.Name)
	}
	return out
}

// nodeLink is one line of `ip -o -d link show`.
type nodeLink struct{ name, kind, master string }

// linkByIndex finds the link with index in `ip -o -d link show` output.
func linkByIndex(out string, index int) (nodeLink, bool) {
	for _, line := range strings.Split(out, "\n") {
		head, rest, ok := strings.Cut(line, ": ")
		if !ok || head != strconv.Itoa(index) {
			continue
		}
		name, _, _ := strings.Cut(rest, ":")
		name, _, _ = strings.Cut(name, "@")
		l := nodeLink{name: name}
		fields := strings.Fields(rest)
		for i, f := range fields {
			if f == "master" && i+1 < len(fields) {
				l.master = fields[i+1]
			}
			// -d prints the link's kind first on its details line.
			if f == "veth" || f == "bridge" || f == "vxlan" || f == "ipip" {
				if l.kind == "" {
					l.kind = f
				}
			}
		}
		return l, true
	}
	return nodeLink{}, false
}

// The specs of this package.
const (
	specPodIPs    = "network-pod-ips"
	specReadiness = "network-readiness"
)

var _ = ginkgo.Describe("Pod network", func() {
	f := framework.New("net")

	ginkgo.It("each Pod gets its own IP from the pod network, on its eth0, and Pods reach each other by IP",
		framework.Checks(specPodIPs, framework.Uses(cluster.NodeExec)),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.PodsReady)
			pods := startReady(ctx, f, f.RecordPods(ctx), appPod("alpha", nil), appPod("beta", nil))
			a, b := pods["alpha"].Pod, pods["beta"].Pod
			// Each Pod's IP against the pod CIDR of its own node: the two
			// may run on different nodes.
			podCIDR := func(p *corev1.Pod) string {
				node, err := f.Client.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
				framework.ExpectNoError(err, "read node %s", p.Spec.NodeName)
				return node.Spec.PodCIDR
			}
			inCIDR := func(p *corev1.Pod) bool {
				_, n, err := net.ParseCIDR(podCIDR(p))
				return err == nil && n.Contains(net.ParseIP(p.Status.PodIP))
			}
			ab := f.Fetch(ctx, "alpha", "", "http://"+b.Status.PodIP+":8080/", 3)
			ba := f.Fetch(ctx, "beta", "", "http://"+a.Status.PodIP+":8080/", 3)
			ev := podIPsEvidence{
				Distinct: a.Status.PodIP != b.Status.PodIP, InNodePodCIDR: inCIDR(a) && inCIDR(b),
				AlphaReachesBeta: ab.Responses["beta"] == 3, BetaReachesAlpha: ba.Responses["alpha"] == 3, PodCIDR: podCIDR(a),
			}
			if ab.Last != nil {
				ev.Eth0HasPodIP = testapp.HasAddr(ab.Last.Interfaces["eth0"], b.Status.PodIP)
			}
			podIPs.Record(ev)

			ginkgo.By("the host end of beta's veth pair, on its node")
			switch {
			case ab.Last == nil:
				hostVeth.Unobservable("beta never answered, so its eth0's peer is unknown")
			case !f.Has(cluster.NodeExec):
				hostVeth.Unobservable("%s", f.Missing(cluster.NodeExec))
			default:
				peer, isPair := ab.Last.PeerIndex["eth0"]
				hv := hostVethEvidence{PodEth0IsPair: isPair, PeerIndex: peer}
				links, err := f.Cluster.RunOnNode(ctx, b.Spec.NodeName, "ip", "-o", "-d", "link", "show")
				framework.ExpectNoError(err, "list the links of node %s", b.Spec.NodeName)
				if l, ok := linkByIndex(string(links), peer); ok && isPair {
					hv.Found, hv.Name, hv.Kind, hv.Master = true, l.name, l.kind, l.master
				}
				hostVeth.Record(hv)
			}
		})

	ginkgo.It("readiness decides the EndpointSlice, both ways, and the Service sends traffic to ready endpoints only",
		framework.Checks(specReadiness, framework.Uses(cluster.AuditLog)),
		framework.Takes(33),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.PodsReady)
			labels := map[string]string{"app": "served"}
			_, err := f.Client.CoreV1().Services(f.Namespace).Create(ctx, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "served"},
				Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
			}, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create the Service")
			log, from := f.AuditLog()
			recordProxyWatches(f, log)
			endpoints := trackEndpoints(ctx, f, "served")
			slices := f.Record(ctx, "EndpointSlices", cache.NewFilteredListWatchFromClient(f.Client.DiscoveryV1().RESTClient(), "endpointslices", f.Namespace,
				func(o *metav1.ListOptions) { o.LabelSelector = discoveryv1.LabelServiceName + "=served" }))
			pods := startReady(ctx, f, f.RecordPods(ctx), appPod("server-a", labels), appPod("server-b", labels), appPod("client", nil))
			b := pods["server-b"].Pod

			ginkgo.By("the EndpointSlice follows server-b's readiness, both ways")
			// Wait for the endpoint's first ready state before reading the
			// order of writes up to it.
			window := framework.Timeout.Endpoint
			endpoint := func(what string, wantReady bool) (time.Time, bool) {
				ginkgo.GinkgoHelper()
				events, ok := framework.Await(ctx, slices, what, window, func(es []observe.Event) bool {
					r, found := endpointReady(es, b.Status.PodIP)
					return found && r == wantReady
				})
				if !ok {
					return time.Time{}, false
				}
				return events[len(events)-1].Received, true
			}
			ev := readinessEvidence{WindowSeconds: window.Seconds()}
			_, firstReady := endpoint("server-b's endpoint to be ready", true)
			ev.NotReadyBeforeFirstPass, ev.ListedNotReadyBeforePass = firstPass(slices.Events(), b)
			ip := b.Status.PodIP
			endpoints.ev.ReadyAfterPass = endpoints.await(ctx, "server-b's address to be ready in the Endpoints", ip, true, window)
			// Each record is followed on its own: a cluster may keep one
			// without the other (a controller disabled).
			inEndpoints := endpoints.ev.ReadyAfterPass
			if firstReady || inEndpoints {
				switched := time.Now()
				f.Fetch(ctx, "server-b", "", "http://localhost:8080/control?ready=false", 1)
				if firstReady {
					var at time.Time
					at, ev.NotReadyInSlice = endpoint("server-b's endpoint to be not ready", false)
					if ev.NotReadyInSlice {
						ev.NotReadyInSliceAfterMs = framework.Millis(at.Sub(switched))
					}
				}
				if inEndpoints {
					endpoints.ev.NotReadyWhenProbeFails = endpoints.await(ctx, "server-b's address to be not ready in the Endpoints", ip, false, window)
				}
				switched = time.Now()
				f.Fetch(ctx, "server-b", "", "http://localhost:8080/control?ready=true", 1)
				if firstReady {
					var at time.Time
					at, ev.ReadyAgainInSlice = endpoint("server-b's endpoint to be ready again", true)
					if ev.ReadyAgainInSlice {
						ev.ReadyInSliceAfterMs = framework.Millis(at.Sub(switched))
					}
				}
				if inEndpoints {
					endpoints.ev.ReadyAgain = endpoints.await(ctx, "server-b's address to be ready again in the Endpoints", ip, true, window)
				}
			}
			readiness.Record(ev)
			endpoints.record(f, log, from)
			if !firstReady || !ev.NotReadyInSlice || !ev.ReadyAgainInSlice {
				framework.Unmet("kube-controller-manager", "server-b's EndpointSlice followed its readiness",
					fmt.Sprintf("first ready: %t, not ready after its probe failed: %t, ready again: %t (windows of %s)", firstReady, ev.NotReadyInSlice, ev.ReadyAgainInSlice, window))
			}
			framework.Saw("kube-controller-manager", "the EndpointSlice followed a Pod's readiness both ways")

			ginkgo.By("traffic through the ClusterIP: both servers, then server-a only, then both again")
			measureTraffic(ctx, f, pods["server-b"].Pod)
		})
})

// measureTraffic sends requests to the Service's ClusterIP from the client
// Pod while server-b's readiness changes, and records who answered.
func measureTraffic(ctx context.Context, f *framework.Framework, b *corev1.Pod) {
	ginkgo.GinkgoHelper()
	svc, err := f.Client.CoreV1().Services(f.Namespace).Get(ctx, "served", metav1.GetOptions{})
	framework.ExpectNoError(err, "read the Service")
	url := "http://" + svc.Spec.ClusterIP + "/"
	ev := trafficEvidence{}
	var last testapp.FetchResult
	// kube-proxy applies endpoint changes on its own schedule; wait until
	// traffic follows, measuring how long that took.
	follow := func(what string, bServed bool) (float64, bool) {
		ginkgo.GinkgoHelper()
		began := time.Now()
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, framework.Timeout.Traffic, true, func(ctx context.Context) (bool, error) {
			r, err := f.TryFetch(ctx, "client", "", url, 10)
			if err != nil {
				last.LastError = err.Error()
				return false, nil
			}
			last = r
			ev.UnknownResponders += last.Unknown
			if len(last.Responses) > 0 {
				ev.Reached = true
			}
			return (last.Responses["server-b"] > 0) == bServed && last.Errors == 0, nil
		})
		return framework.Millis(time.Since(began)), err == nil
	}
	measure := func() testapp.FetchResult {
		r := f.Fetch(ctx, "client", "", url, 60)
		ev.UnknownResponders += r.Unknown
		ev.FailedRequests += r.Errors
		if r.LastError != "" {
			ev.LastError = r.LastError
		}
		return r
	}
	stop := func(what string) {
		ginkgo.GinkgoHelper()
		ev.LastError = last.LastError
		traffic.Record(ev)
		framework.Unmet("kube-proxy", what, fmt.Sprintf("not within %s; last answers %v, %d failed: %s", framework.Timeout.Traffic, last.Responses, last.Errors, last.LastError))
	}
	if _, ok := follow("traffic to reach server-b", true); !ok {
		stop("Service traffic reached both ready Pods")
	}
	both := measure()
	ev.BothReady, ev.BothServed = fmt.Sprint(both.Responses), both.Responses["server-a"] > 0 && both.Responses["server-b"] > 0
	framework.Saw("kube-proxy", "sent Service traffic to its ready endpoints")

	f.Fetch(ctx, "server-b", "", "http://localhost:8080/control?ready=false", 1)
	lag, ok := follow("traffic to leave server-b", false)
	if !ok {
		stop("Service traffic left a Pod that turned not ready")
	}
	onlyA := measure()
	ev.ProxyLagDownMs, ev.WhileBNotReady = lag, fmt.Sprint(onlyA.Responses)
	ev.OnlyReadyServed = onlyA.Responses["server-b"] == 0 && onlyA.Responses["server-a"] == onlyA.Requests

	f.Fetch(ctx, "server-b", "", "http://localhost:8080/control?ready=true", 1)
	lag, ok = follow("traffic to reach server-b again", true)
	if !ok {
		stop("Service traffic came back to a Pod that turned ready again")
	}
	again := measure()
	ev.ProxyLagUpMs, ev.AfterBReadyAgain = lag, fmt.Sprint(again.Responses)
	ev.BothServedAgain = again.Responses["server-a"] > 0 && again.Responses["server-b"] > 0
	traffic.Record(ev)
}

// endpointReady finds ip among the latest EndpointSlices and returns its
// ready condition.
func endpointReady(events []observe.Event, ip string) (bool, bool) {
	for _, s := range observe.Latest[*discoveryv1.EndpointSlice](events) {
		if ready, found := endpointIn(s, ip); found {
			return ready, true
		}
	}
	return false, false
}

func endpointIn(s *discoveryv1.EndpointSlice, ip string) (ready, found bool) {
	for _, ep := range s.Endpoints {
		if slices.Contains(ep.Addresses, ip) {
			return ep.Conditions.Ready != nil && *ep.Conditions.Ready, true
		}
	}
	return false, false
}

// firstPass reads, in etcd's order of writes (resourceVersions share etcd's
// revision counter), whether any EndpointSlice marked the Pod's endpoint
// ready before the write that made the Pod Ready, and whether one listed it
// not ready before that.
func firstPass(events []observe.Event, ready *corev1.Pod) (notReadyBefore, listedBefore bool) {
	readyRV := revision(ready.ResourceVersion)
	notReadyBefore = true
	for _, e := range events {
		s, ok := e.Object.(*discoveryv1.EndpointSlice)
		if !ok || revision(s.ResourceVersion) >= readyRV {
			continue
		}
		if r, found := endpointIn(s, ready.Status.PodIP); found {
			listedBefore = true
			if r {
				notReadyBefore = false
			}
		}
	}
	return notReadyBefore, listedBefore
}

func revision(rv string) int64 {
	n, _ := strconv.ParseInt(rv, 10, 64)
	return n
}
