package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/contract/ownership"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/kube/audit"
	"github.com/kubeproof/kubeproof/kube/kubectl"
	"github.com/kubeproof/kubeproof/kube/namespace"
	"github.com/kubeproof/kubeproof/kube/noderuntime"
	"github.com/kubeproof/kubeproof/kube/observe"
	"github.com/kubeproof/kubeproof/kube/podstate"
	"github.com/kubeproof/kubeproof/webhooks/install"
)

// Options of a trace.
type Options struct {
	Info *cluster.Info
	// Manifest is the YAML applied; File names it in the result.
	Manifest []byte
	File     string
	// Repeat is how many times to apply it, each in a fresh namespace.
	Repeat int
	// Timeout bounds one run, from apply to a ready endpoint.
	Timeout  time.Duration
	Progress *progress.Printer
}

// serviceName is the Service trace puts in front of the workload, for the
// endpoint stage.
const serviceName = "kp-trace"

// endpointSliceController is the identity that writes EndpointSlices.
const endpointSliceController = "system:serviceaccount:kube-system:endpointslice-controller"

// Trace applies the manifest opts.Repeat times and returns the timelines.
func Trace(ctx context.Context, opts Options) (*Result, error) {
	w, err := parseManifest(opts.Manifest)
	if err != nil {
		return nil, err
	}
	if opts.Repeat < 1 {
		opts.Repeat = 1
	}
	if opts.Timeout == 0 {
		opts.Timeout = 3 * time.Minute
	}
	if opts.Progress == nil {
		opts.Progress = progress.Discard()
	}
	_, client, err := cluster.NewClient(opts.Info.Kubeconfig, opts.Info.Context)
	if err != nil {
		return nil, err
	}
	k := kubectl.Runner{Path: opts.Info.Kubectl, Kubeconfig: opts.Info.Kubeconfig, Context: opts.Info.Context}
	if k.Path == "" {
		if k.Path, err = exec.LookPath("kubectl"); err != nil {
			return nil, fmt.Errorf("no kubectl: the cluster info names none and none is in PATH")
		}
	}
	res := &Result{SchemaVersion: Schema, Manifest: opts.File, Kind: w.kind, Cluster: opts.Info.Name, Provider: opts.Info.Provider}
	for i := 0; i < opts.Repeat; i++ {
		done := opts.Progress.Step("trace %d/%d: kubectl apply -f %s", i+1, opts.Repeat, opts.File)
		run, err := traceOnce(ctx, opts, client, k, w)
		done(err)
		if err != nil {
			return nil, err
		}
		res.Runs = append(res.Runs, run)
	}
	res.Summary = summarize(res.Runs)
	return res, nil
}

// traceOnce applies the manifest in a namespace of its own and reads the
// timeline; the namespace is deleted afterwards.
func traceOnce(ctx context.Context, opts Options, client kubernetes.Interface, k kubectl.Runner, w workload) (run Run, err error) {
	info := opts.Info
	ns, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "kp-trace-", Labels: map[string]string{"kubeproof.io/trace": "true", ownership.Label: "trace"}}}, metav1.CreateOptions{})
	if err != nil {
		return run, fmt.Errorf("create the trace namespace: %w", err)
	}
	run.Namespace = ns.Name
	defer func() {
		if derr := namespace.Delete(context.WithoutCancel(ctx), client, ns.Name, 3*time.Minute); derr != nil && err == nil {
			err = derr
		}
	}()

	// The recorder webhook: it allows everything and notes when each
	// request arrived. It needs our images on the nodes.
	var hook *install.Server
	if info.Has(cluster.LoadImage) {
		hook, err = install.Deploy(ctx, client, ns.Name, install.Options{Webhook: images.Webhook.Ref, TestApp: images.TestApp.Ref, Labels: ownership.Labels("trace")}, 2*time.Minute)
		if err != nil {
			return run, fmt.Errorf("install the recorder webhook: %w", err)
		}
		create := []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
		if err := hook.Mutating(ctx, "trace", install.Webhook{Name: "trace.kubeproof.io", Path: "/allow/trace", Rules: []admissionregistrationv1.RuleWithOperations{
			{Operations: create, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}},
			{Operations: create, Rule: admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}}},
		}}); err != nil {
			return run, err
		}
		defer func() { _ = hook.Uninstall(context.WithoutCancel(ctx), "trace") }()
		if err := hook.WaitEffective(ctx, "/allow/trace", 2*time.Minute); err != nil {
			return run, err
		}
	}
	if _, err := client.CoreV1().Services(ns.Name).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: serviceName},
		Spec:       corev1.ServiceSpec{Selector: w.labels, Ports: []corev1.ServicePort{{Port: 80, TargetPort: w.port}}},
	}, metav1.CreateOptions{}); err != nil {
		return run, fmt.Errorf("create the trace Service: %w", err)
	}

	var log *audit.Log
	var from audit.Offset
	if info.Has(cluster.AuditLog) {
		log = audit.Open(info.AuditLogPath)
		if from, err = log.Mark(); err != nil {
			return run, err
		}
	}
	pods, err := observe.Record(ctx, cache.NewListWatchFromClient(client.CoreV1().RESTClient(), "pods", ns.Name, fields.Everything()))
	if err != nil {
		return run, fmt.Errorf("watch Pods: %w", err)
	}
	defer pods.Stop()

	run.Started = time.Now()
	out, err := k.Run(ctx, bytes.NewReader(opts.Manifest), "apply", "-f", "-", "--namespace", ns.Name)
	if err != nil {
		return run, fmt.Errorf("kubectl apply: %w", err)
	}
	if out.ExitCode != 0 {
		return run, fmt.Errorf("kubectl apply failed: %s", strings.TrimSpace(out.Stderr))
	}

	// Ready Pods, then ready endpoints for all of them.
	readyAt := map[string]time.Time{}
	_, err = pods.WaitFor(ctx, opts.Timeout, fmt.Sprintf("%d Ready Pods of the %s", w.replicas, w.kind), func(es []observe.Event) bool {
		for _, e := range es {
			if p, ok := e.Object.(*corev1.Pod); ok && matches(p.Labels, w.labels) && podstate.Ready(p) {
				if _, seen := readyAt[p.Name]; !seen {
					readyAt[p.Name] = e.Received
				}
			}
		}
		return len(readyAt) >= w.replicas
	}, describePod)
	if err != nil {
		return run, err
	}
	slices := cache.NewFilteredListWatchFromClient(client.DiscoveryV1().RESTClient(), "endpointslices", ns.Name, func(o *metav1.ListOptions) {
		o.LabelSelector = discoveryv1.LabelServiceName + "=" + serviceName
	})
	if _, err := observe.Until(ctx, opts.Timeout, fmt.Sprintf("%d ready endpoints of Service %s", w.replicas, serviceName), slices, func(s *discoveryv1.EndpointSlice) (bool, error) {
		return readyEndpoints(s) >= w.replicas, nil
	}, func(s *discoveryv1.EndpointSlice) string {
		return fmt.Sprintf("EndpointSlice %s with %d ready endpoints of %d", s.Name, readyEndpoints(s), len(s.Endpoints))
	}); err != nil {
		return run, err
	}

	first := firstPod(pods.Events(), w.labels)
	if first == nil {
		return run, fmt.Errorf("no Pod of the %s was seen", w.kind)
	}
	final, err := client.CoreV1().Pods(ns.Name).Get(ctx, first.Name, metav1.GetOptions{})
	if err != nil {
		return run, fmt.Errorf("read Pod %s: %w", first.Name, err)
	}
	run.Pod, run.Node = final.Name, final.Spec.NodeName

	tl := timeline{w: w, pod: final, readySeen: readyAt[first.Name], started: run.Started}
	if log != nil {
		tl.events, err = log.WaitFor(ctx, from, 30*time.Second, "the audit events of the trace", audit.InNamespace(ns.Name), func(es []audit.Event) bool {
			return endpointReady(es, final) != nil
		})
		if err != nil {
			return run, err
		}
	}
	if hook != nil {
		if tl.calls, err = hook.Calls(ctx); err != nil {
			return run, err
		}
	}
	if info.Has(cluster.NodeExec) {
		tl.runtime, _ = noderuntime.Containers(ctx, info, final.Spec.NodeName, ns.Name, final.Name)
	}
	tl.notes = map[string]string{}
	if log == nil {
		tl.notes["audit"] = info.Missing(cluster.AuditLog)
	}
	if hook == nil {
		tl.notes["webhook"] = info.Missing(cluster.LoadImage)
	}
	run.Stages = tl.stages()
	return run, nil
}

func matches(labels, selector map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func describePod(e observe.Event) string {
	p, ok := e.Object.(*corev1.Pod)
	if !ok {
		return string(e.Type)
	}
	return fmt.Sprintf("%s pod %s phase=%s node=%s ready=%v", e.Type, p.Name, p.Status.Phase, p.Spec.NodeName, podstate.Ready(p))
}

func readyEndpoints(s *discoveryv1.EndpointSlice) int {
	n := 0
	for _, e := range s.Endpoints {
		if e.Conditions.Ready != nil && *e.Conditions.Ready {
			n++
		}
	}
	return n
}

// firstPod is the first Pod of the workload the watch saw added.
func firstPod(events []observe.Event, labels map[string]string) *corev1.Pod {
	for _, e := range events {
		if p, ok := e.Object.(*corev1.Pod); ok && e.Type == watch.Added && matches(p.Labels, labels) {
			return p
		}
	}
	return nil
}

// endpointReady finds the EndpointSlice write that first marked pod's
// endpoint ready.
func endpointReady(es []audit.Event, pod *corev1.Pod) *audit.Event {
	for i, e := range es {
		if e.ObjectRef == nil || e.ObjectRef.Resource != "endpointslices" || e.User.Username != endpointSliceController || len(e.RequestObject) == 0 {
			continue
		}
		var s discoveryv1.EndpointSlice
		if json.Unmarshal(e.RequestObject, &s) != nil {
			continue
		}
		for _, ep := range s.Endpoints {
			if ep.TargetRef != nil && ep.TargetRef.Name == pod.Name && ep.Conditions.Ready != nil && *ep.Conditions.Ready {
				return &es[i]
			}
		}
	}
	return nil
}
