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

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/contract/ownership"
	"github.com/kubeproof/kubeproof/kube/access"
	"github.com/kubeproof/kubeproof/kube/namespace"
	"github.com/kubeproof/kubeproof/kube/observe"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
	"github.com/kubeproof/kubeproof/kube/podstate"
)

// canaryResult is what the first process tells the others.
type canaryResult struct {
	Steps  [factCount]canaryStep `json:"steps"`
	Denied map[string]string     `json:"denied,omitempty"`
}

var _ = ginkgo.SynchronizedBeforeSuite(func(ctx ginkgo.SpecContext) []byte {
	data, err := json.Marshal(runCanary(ctx))
	ExpectNoError(err, "encode the canary's steps")
	return data
}, func(data []byte) {
	var r canaryResult
	ExpectNoError(json.Unmarshal(data, &r), "decode the canary's steps")
	canary, denied = r.Steps, r.Denied
})

// runCanary walks the path once and notes every step as seen or missed. A
// cluster that cannot be reached at all fails the suite (that is an error,
// not a finding).
func runCanary(ctx context.Context) canaryResult {
	ginkgo.GinkgoHelper()
	var steps [factCount]canaryStep
	info, err := Cluster()
	ExpectNoError(err, "load the cluster under test")
	applyScale()
	_, client, err := cluster.NewClient(info.Kubeconfig, info.Context)
	ExpectNoError(err, "load kubeconfig")
	// The namespace is named here, not by the API server, so that the
	// watches start before it exists: its ServiceAccount can come at once.
	c := &canaryRun{client: client, ns: "kp-canary-" + rand.String(5), began: time.Now(), steps: &steps}
	defer func() { _ = namespace.StartDelete(context.WithoutCancel(ctx), client, c.ns) }()
	c.walk(ctx)
	for i, s := range steps {
		if s.Reached {
			component := factInfo[i].component
			if s.Unavailable {
				// Not the kubelet's fault: the nodes were never given
				// our images, or cannot reach the registry that has them.
				component = "kubeproof's images"
			}
			note(component, s.OK, describeStep(Fact(i), s))
		}
	}
	return canaryResult{Steps: steps, Denied: c.denied}
}

// deniedPermissions asks, in the canary's namespace, which of the
// permissions specs need the run's user lacks. A cluster that does not
// answer the question denies nothing here: the specs then find out.
func deniedPermissions(ctx context.Context, client kubernetes.Interface, ns string) map[string]string {
	results, err := access.Check(ctx, client, ns, access.All)
	if err != nil {
		ginkgo.GinkgoWriter.Printf("checking the run's permissions: %v\n", err)
	}
	out := map[string]string{}
	for _, r := range results {
		if !r.Allowed {
			out[r.Permission.String()] = r.Reason
		}
	}
	return out
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
	// denied: the permissions the run's user lacks (see NeedsAccess).
	denied map[string]string
}

// may reports whether the run's user has the permission step f needs.
func (c *canaryRun) may(f Fact) bool {
	p := factInfo[f].perm
	if p == nil {
		return true
	}
	_, no := c.denied[p.String()]
	return !no
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
		Name: c.ns, Labels: map[string]string{ownership.Label: runID(), "kubeproof.io/spec": "canary"}}}, metav1.CreateOptions{})
	ExpectNoError(err, "create the canary's namespace")
	c.denied = deniedPermissions(ctx, c.client, c.ns)

	c.step(ctx, ServiceAccounts, sas, Timeout.Controller, func(e observe.Event) (bool, string) {
		sa, ok := e.Object.(*corev1.ServiceAccount)
		return ok && sa.Name == "default", ""
	})
	labels := map[string]string{"app": name}
	spec := podsecurity.Restricted(corev1.PodSpec{
		TerminationGracePeriodSeconds: new(int64),
		Containers: []corev1.Container{{Name: "app", Image: images.TestApp.PodRef(), Args: []string{"serve", "--listen=:8080"},
			ReadinessProbe: &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{
				HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(8080)}}}}},
	})
	one := int32(1)
	deployLabels := map[string]string{"app": name + "-deployment"}
	if c.may(ReplicaSets) {
		_, err = c.client.AppsV1().Deployments(c.ns).Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: deployLabels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: deployLabels}, Spec: spec}},
		}, metav1.CreateOptions{})
		ExpectNoError(err, "create the canary Deployment")
	}
	c.began = time.Now()
	imagePod := name + "-image"
	if c.steps[ServiceAccounts].OK && c.may(PodsBound) {
		_, err = c.client.CoreV1().Services(c.ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}, metav1.CreateOptions{})
		ExpectNoError(err, "create the canary Service")
		ExpectNoError(usePullSecret(ctx, c.client, c.ns), "give the canary's namespace the registry's credentials")
		_, err = c.client.CoreV1().Pods(c.ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: spec}, metav1.CreateOptions{})
		ExpectNoError(err, "create the canary Pod")
		// A Pod placed on a node by its creator, with a container of each
		// of our images: whether the node has them is known without the
		// scheduler (a cluster without a node for ordinary Pods leaves it
		// to the scheduler). The containers need not keep running (the
		// webhook server exits without its certificate): being created is
		// enough.
		placed := corev1.PodSpec{NodeName: firstWorker(ctx, c.client), RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: new(int64)}
		for _, img := range images.Workloads {
			placed.Containers = append(placed.Containers, corev1.Container{Name: img.Program, Image: img.PodRef(), Args: img.Args})
		}
		podsecurity.Restrict(&placed)
		_, err = c.client.CoreV1().Pods(c.ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: imagePod}, Spec: placed}, metav1.CreateOptions{})
		ExpectNoError(err, "create the canary's placed Pod")
	}

	pod := func(cond func(*corev1.Pod) (bool, string)) func(observe.Event) (bool, string) {
		return func(e observe.Event) (bool, string) {
			if p := PodOf(e); p != nil && p.Name == name {
				return cond(p)
			}
			return false, ""
		}
	}
	c.step(ctx, Images, pods, Timeout.PodStart, func(e observe.Event) (bool, string) {
		p := PodOf(e)
		if p == nil || p.Name != imagePod {
			return false, ""
		}
		if podstate.ImageUnavailable(p) {
			return false, stuckPrefix + unavailablePrefix + podstate.StuckReason(p) + "; " + imageHint()
		}
		return podstate.ImagesPresent(p, len(images.Workloads)), DescribePod(p)
	})
	c.steps[Images].Unavailable = strings.HasPrefix(c.steps[Images].Detail, unavailablePrefix)
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

// unavailablePrefix starts the Images step's detail when the nodes could
// not get an image.
const unavailablePrefix = "image unavailable: "

// step waits for an event for which seen holds, if the step it needs
// happened; seen also describes the event, for the note when the step does
// not happen.
func (c *canaryRun) step(ctx context.Context, f Fact, rec *observe.Recorder, window time.Duration, seen func(observe.Event) (bool, string)) {
	ginkgo.GinkgoHelper()
	s := &c.steps[f]
	if !c.may(f) {
		s.Detail = "not taken: the kubeconfig's user may not " + factInfo[f].perm.String()
		return
	}
	for _, after := range factInfo[f].after {
		if !c.steps[after].OK {
			s.Detail = "not reached: " + factInfo[after].what + " did not happen"
			return
		}
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
		s.Detail = strings.TrimPrefix(last, stuckPrefix)
		return
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

// imageHint says how to get kubeproof's images to nodes it did not load
// them into.
func imageHint() string {
	if images.Registry() == images.LoadedRegistry {
		return "kubeproof's images are not on the node and no registry has them: run with --image-registry REGISTRY (kubeproof pushes them there), or name where they are published with $KUBEPROOF_IMAGE_REGISTRY (see docs/your-cluster.md)"
	}
	var refs []string
	for _, img := range images.Workloads {
		refs = append(refs, img.PodRef())
	}
	return "the nodes could not pull kubeproof's images (" + strings.Join(refs, ", ") + ") from " + images.Registry() +
		" (are they there? is it reachable from the nodes? do they need --image-pull-secret?)"
}

// firstWorker is the first real node (by name) that takes ordinary Pods,
// or "" if none does.
func firstWorker(ctx context.Context, client kubernetes.Interface) string {
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "!" + SimulatedLabel})
	if err != nil {
		return ""
	}
	nodes := workers(list.Items)
	if len(nodes) == 0 {
		return ""
	}
	return nodes[0].Name
}
