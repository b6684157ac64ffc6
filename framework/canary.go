package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/framework/images"
	"github.com/kubeproof/kubeproof/framework/namespace"
	"github.com/kubeproof/kubeproof/framework/observe"
	"github.com/kubeproof/kubeproof/framework/podstate"
)

// Fact is one step on the paths from a Pod or a Deployment to a ready
// Service endpoint that many specs stand on. Before any spec runs, the
// canary takes both paths once (a Pod of the test app behind a Service,
// and a one-replica Deployment) and notes which steps the cluster took. A
// spec that needs a step (Needs) but does not check it stops at once when
// the canary did not see it happen, so a broken component costs one
// window, not one per spec, and the claims of those specs are not
// checkable, naming the step and its component.
type Fact int

// The canary's steps.
const (
	ServiceAccounts Fact = iota
	PodsBound
	PodsRunning
	PodsReady
	Endpoints
	ReplicaSets
	PodsCreated
	factCount
)

// factInfo says what each step is, which component takes it, and the step
// it needs.
var factInfo = [factCount]struct {
	component, what string
	after           Fact
}{
	ServiceAccounts: {"kube-controller-manager", "a new namespace got its default ServiceAccount (serviceaccount controller)", -1},
	PodsBound:       {"kube-scheduler", "a Pod was bound to a node", ServiceAccounts},
	PodsRunning:     {"kubelet", "a bound Pod's container was started", PodsBound},
	PodsReady:       {"kubelet", "a running Pod turned Ready (readiness probe)", PodsRunning},
	Endpoints:       {"kube-controller-manager", "a Ready Pod became a ready endpoint of its Service (endpointslice controller)", PodsReady},
	ReplicaSets:     {"kube-controller-manager", "a Deployment got a ReplicaSet (deployment controller)", -1},
	PodsCreated:     {"kube-controller-manager", "a ReplicaSet got its Pod (replicaset controller)", ReplicaSets},
}

// canaryStep is what the canary saw of one step.
type canaryStep struct {
	// Reached: the steps before it happened, so it was waited for.
	Reached bool    `json:"reached"`
	OK      bool    `json:"ok"`
	Ms      float64 `json:"ms"`
	Detail  string  `json:"detail,omitempty"`
}

// canary holds the steps as the canary saw them, in every process.
var canary [factCount]canaryStep

// Needs stops the spec when the canary saw step f, or a step it needs, not
// happen: the spec's claims are then not checkable, naming the step.
// Specs that check a step themselves do not call Needs for it: they
// observe it in their own window and record what they saw.
func (f *Framework) Needs(facts ...Fact) {
	ginkgo.GinkgoHelper()
	for _, fact := range facts {
		var chain []Fact
		for g := fact; g >= 0; g = factInfo[g].after {
			chain = append([]Fact{g}, chain...)
		}
		for _, g := range chain {
			if s := canary[g]; !s.OK {
				stop(factInfo[g].component, factInfo[g].what, "the canary before the specs saw it not happen: "+s.Detail)
			}
		}
	}
}

var _ = ginkgo.SynchronizedBeforeSuite(func(ctx ginkgo.SpecContext) []byte {
	steps := runCanary(ctx)
	data, err := json.Marshal(steps)
	ExpectNoError(err, "encode the canary's steps")
	return data
}, func(data []byte) {
	ExpectNoError(json.Unmarshal(data, &canary), "decode the canary's steps")
})

// runCanary walks the path once and notes every step as seen or missed. A
// cluster that cannot be reached at all fails the suite (that is an error,
// not a finding).
func runCanary(ctx context.Context) [factCount]canaryStep {
	ginkgo.GinkgoHelper()
	var steps [factCount]canaryStep
	info, err := Cluster()
	ExpectNoError(err, "load the cluster under test")
	applyScale()
	cfg, err := cluster.RESTConfig(info.Kubeconfig, info.Context)
	ExpectNoError(err, "load kubeconfig")
	client, err := kubernetes.NewForConfig(cfg)
	ExpectNoError(err, "make a client")
	// The namespace is named here, not by the API server, so that the
	// watches start before it exists: its ServiceAccount can come at once.
	c := &canaryRun{client: client, ns: "kp-canary-" + rand.String(5), began: time.Now(), steps: &steps}
	defer func() { _ = namespace.StartDelete(context.WithoutCancel(ctx), client, c.ns) }()
	c.walk(ctx)
	for i, s := range steps {
		if s.Reached {
			note(factInfo[i].component, s.OK, describeStep(Fact(i), s))
		}
	}
	return steps
}

func describeStep(f Fact, s canaryStep) string {
	if s.OK {
		return fmt.Sprintf("%s (canary, %.0f ms after the Deployment was created)", factInfo[f].what, s.Ms)
	}
	return fmt.Sprintf("%s (canary): %s", factInfo[f].what, s.Detail)
}

type canaryRun struct {
	client kubernetes.Interface
	ns     string
	began  time.Time
	steps  *[factCount]canaryStep
}

// walk takes both paths. A step is waited for only once the step it needs
// happened; the others are noted as not reached.
func (c *canaryRun) walk(ctx context.Context) {
	ginkgo.GinkgoHelper()
	const name = "kubeproof-canary"
	apps := c.client.AppsV1().RESTClient()
	var recs []*observe.Recorder
	defer func() {
		for _, r := range recs {
			r.Stop()
		}
	}()
	rec := func(what string, lw cache.ListerWatcherWithContext) *observe.Recorder {
		r, err := observe.Record(ctx, lw)
		ExpectNoError(err, "watch the canary's %s", what)
		recs = append(recs, r)
		return r
	}
	sas := rec("ServiceAccounts", cache.NewListWatchFromClient(c.client.CoreV1().RESTClient(), "serviceaccounts", c.ns, fields.Everything()))
	rss := rec("ReplicaSets", cache.NewListWatchFromClient(apps, "replicasets", c.ns, fields.Everything()))
	pods := rec("Pods", cache.NewListWatchFromClient(c.client.CoreV1().RESTClient(), "pods", c.ns, fields.Everything()))
	slices := rec("EndpointSlices", cache.NewListWatchFromClient(c.client.DiscoveryV1().RESTClient(), "endpointslices", c.ns, fields.Everything()))
	_, err := c.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: c.ns, Labels: map[string]string{runLabel: runID(), "kubeproof.io/spec": "canary"}}}, metav1.CreateOptions{})
	ExpectNoError(err, "create the canary's namespace")

	c.step(ctx, ServiceAccounts, sas, Timeout.Controller, func(e observe.Event) (bool, string) {
		sa, ok := e.Object.(*corev1.ServiceAccount)
		return ok && sa.Name == "default", ""
	})
	labels := map[string]string{"app": name}
	spec := corev1.PodSpec{
		TerminationGracePeriodSeconds: new(int64),
		Containers: []corev1.Container{{Name: "app", Image: images.TestApp.Ref, Args: []string{"serve", "--listen=:8080"},
			ReadinessProbe: &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{
				HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(8080)}}}}},
	}
	one := int32(1)
	deployLabels := map[string]string{"app": name + "-deployment"}
	_, err = c.client.AppsV1().Deployments(c.ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: deployLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: deployLabels}, Spec: spec}},
	}, metav1.CreateOptions{})
	ExpectNoError(err, "create the canary Deployment")
	c.began = time.Now()
	_, err = c.client.CoreV1().Services(c.ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}, metav1.CreateOptions{})
	ExpectNoError(err, "create the canary Service")
	if c.steps[ServiceAccounts].OK {
		_, err = c.client.CoreV1().Pods(c.ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: spec}, metav1.CreateOptions{})
		ExpectNoError(err, "create the canary Pod")
	}

	pod := func(cond func(*corev1.Pod) (bool, string)) func(observe.Event) (bool, string) {
		return func(e observe.Event) (bool, string) {
			if p := PodOf(e); p != nil && p.Name == name {
				return cond(p)
			}
			return false, ""
		}
	}
	c.step(ctx, PodsBound, pods, Timeout.Bind, pod(func(p *corev1.Pod) (bool, string) {
		return p.Spec.NodeName != "", DescribePod(p)
	}))
	c.step(ctx, PodsRunning, pods, Timeout.PodStart, pod(func(p *corev1.Pod) (bool, string) {
		return podstate.AllRunning(p.Status.ContainerStatuses, 1), stuck(p)
	}))
	c.step(ctx, PodsReady, pods, Timeout.PodStart, pod(func(p *corev1.Pod) (bool, string) {
		return podstate.Ready(p), stuck(p)
	}))
	c.step(ctx, Endpoints, slices, Timeout.Endpoint, func(e observe.Event) (bool, string) {
		s, ok := e.Object.(*discoveryv1.EndpointSlice)
		if !ok || s.Labels[discoveryv1.LabelServiceName] != name {
			return false, ""
		}
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
				return true, ""
			}
		}
		return false, fmt.Sprintf("EndpointSlice %s with %d endpoints, none ready", s.Name, len(s.Endpoints))
	})
	c.step(ctx, ReplicaSets, rss, Timeout.Controller, func(e observe.Event) (bool, string) {
		_, ok := e.Object.(*appsv1.ReplicaSet)
		return ok, ""
	})
	c.step(ctx, PodsCreated, pods, Timeout.Controller, func(e observe.Event) (bool, string) {
		p := PodOf(e)
		return p != nil && p.Labels["app"] == deployLabels["app"], ""
	})
}

// stuck describes a Pod; one that cannot start without help (its image
// cannot be pulled, say) is described with stuckPrefix, which ends the
// wait at once.
func stuck(p *corev1.Pod) string {
	if r := podstate.StuckReason(p); r != "" {
		return stuckPrefix + r
	}
	return DescribePod(p)
}

const stuckPrefix = "stuck: "

// step waits for an event for which seen holds, if the step it needs
// happened; seen also describes the event, for the note when the step does
// not happen.
func (c *canaryRun) step(ctx context.Context, f Fact, rec *observe.Recorder, window time.Duration, seen func(observe.Event) (bool, string)) {
	ginkgo.GinkgoHelper()
	s := &c.steps[f]
	if after := factInfo[f].after; after >= 0 && !c.steps[after].OK {
		s.Detail = "not reached: " + factInfo[after].what + " did not happen"
		return
	}
	s.Reached = true
	last := ""
	events, ok := Await(ctx, rec, factInfo[f].what, window, func(es []observe.Event) bool {
		for _, e := range es {
			if ok, d := seen(e); ok {
				return true
			} else if d != "" {
				last = d
			}
		}
		return strings.HasPrefix(last, stuckPrefix)
	})
	if ok && strings.HasPrefix(last, stuckPrefix) {
		ok = false
		last = strings.TrimPrefix(last, stuckPrefix)
	}
	if !ok {
		if last == "" {
			last = "nothing"
		}
		s.Detail = fmt.Sprintf("not seen within %s; last seen: %s", window, last)
		return
	}
	s.OK = true
	for _, e := range events {
		if ok, _ := seen(e); ok {
			s.Ms = Millis(e.Received.Sub(c.began))
			break
		}
	}
}
