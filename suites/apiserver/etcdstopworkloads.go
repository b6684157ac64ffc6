package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/contract/testapp"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/noderuntime"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
)

// What already runs when etcd stops: a server Pod behind a Service and a
// client Pod, Ready and served through the ClusterIP before etcd stops,
// asked while it is stopped through the node's containerd, since without
// etcd the API server can neither read a Pod nor exec into it.

// servedWorkload is where the server and client containers run, and the
// Service's address.
type servedWorkload struct {
	serverNode, server, clientNode, client, url string
}

// workloadPod is a test app serving on 8080 that answers with its name.
func workloadPod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: podsecurity.Restricted(corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", Image: images.TestApp.PodRef(), Args: []string{"serve", "--listen=:8080"},
		Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
		Env:   []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
		ReadinessProbe: &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 1, SuccessThreshold: 1, ProbeHandler: corev1.ProbeHandler{
			HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(8080)}}},
		Resources: framework.Resources("50m", "32Mi"),
	}}})}
}

// startServedWorkload starts the workload and waits until the Service
// answers from the server Pod. What cannot be had (no NodeExec, a Pod not
// Ready, a Service not routed) makes the evidence unobservable, naming it,
// and returns nil: the spec goes on to what it checks of the API server.
func startServedWorkload(ctx context.Context, f *framework.Framework) *servedWorkload {
	ginkgo.GinkgoHelper()
	if !f.Has(cluster.NodeExec) {
		runningWithoutEtcd.Unobservable("%s", f.Missing(cluster.NodeExec))
		return nil
	}
	// A cluster that cannot serve a Pod behind a Service costs no window
	// here: the canary has already seen whether it can.
	if ok, why := framework.CanarySaw(framework.Endpoints); !ok {
		runningWithoutEtcd.Unobservable("%s", why)
		return nil
	}
	rec := f.RecordPods(ctx)
	pods := f.Client.CoreV1().Pods(f.Namespace)
	for _, p := range []*corev1.Pod{workloadPod("server", map[string]string{"app": "served"}), workloadPod("client", nil)} {
		_, err := pods.Create(ctx, p, metav1.CreateOptions{})
		framework.ExpectNoError(err, "create Pod %s", p.Name)
	}
	svc, err := f.Client.CoreV1().Services(f.Namespace).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "served"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "served"}, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}},
		metav1.CreateOptions{})
	framework.ExpectNoError(err, "create the Service")
	nodes := map[string]string{}
	for _, name := range []string{"server", "client"} {
		s := framework.AwaitPod(ctx, rec, name, "Pod "+name+" to be Ready", framework.Timeout.PodStart, framework.PodReady)
		if !s.OK {
			runningWithoutEtcd.Unobservable("Pod %s was not Ready within %s before etcd stopped; last seen: %s", name, framework.Timeout.PodStart, s.LastSeen())
			return nil
		}
		nodes[name] = s.Pod.Spec.NodeName
	}
	w := &servedWorkload{serverNode: nodes["server"], clientNode: nodes["client"], url: "http://" + svc.Spec.ClusterIP + "/"}

	// kube-proxy routes the ClusterIP once the endpoint is ready, on its
	// own schedule: the Service must answer before etcd stops.
	var last testapp.FetchResult
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, framework.Timeout.Traffic, true, func(ctx context.Context) (bool, error) {
		r, err := f.TryFetch(ctx, "client", "", w.url, 1)
		if err != nil {
			last.LastError = err.Error()
			return false, nil
		}
		last = r
		return r.Responses["server"] > 0, nil
	})
	if err != nil {
		runningWithoutEtcd.Unobservable("the Service did not answer from its Pod within %s before etcd stopped; last answers %v: %s", framework.Timeout.Traffic, last.Responses, last.LastError)
		return nil
	}
	var missing string
	w.server, missing = appContainer(ctx, f, w.serverNode, "server")
	if missing == "" {
		w.client, missing = appContainer(ctx, f, w.clientNode, "client")
	}
	if missing != "" {
		runningWithoutEtcd.Unobservable("%s", missing)
		return nil
	}
	return w
}

// appContainer is the ID of Pod pod's container app in node's runtime, or
// why it was not found.
func appContainer(ctx context.Context, f *framework.Framework, node, pod string) (id, missing string) {
	cs, err := noderuntime.Containers(ctx, f.Cluster, node, f.Namespace, pod)
	if err != nil {
		return "", fmt.Sprintf("the node's runtime did not list Pod %s's containers: %v", pod, err)
	}
	for _, c := range cs {
		if c.Kind == "container" && c.Name == "app" {
			return c.ID, ""
		}
	}
	return "", fmt.Sprintf("the node's runtime listed %d containers of Pod %s, none named app", len(cs), pod)
}

// observe asks, with etcd stopped since stopped, whether the server still
// serves on its own port and the Service still answers from it, and
// records what it saw.
func (w *servedWorkload) observe(ctx context.Context, f *framework.Framework, stopped time.Time) {
	if w == nil {
		return
	}
	ev := runningWithoutEtcdEvidence{StoppedSeconds: time.Since(stopped).Seconds()}
	fetch := func(node, id, url string) (testapp.FetchResult, error) {
		ectx, cancel := context.WithTimeout(ctx, 2*writeWindow)
		defer cancel()
		var r testapp.FetchResult
		out, err := noderuntime.Exec(ectx, f.Cluster, node, id, "/kubeproof-testapp", "fetch", "--count", "3", "--timeout", "2s", url)
		if err != nil {
			return r, err
		}
		if err := json.Unmarshal(out, &r); err != nil {
			return r, fmt.Errorf("decode the fetch result %q: %w", out, err)
		}
		return r, nil
	}
	own, err := fetch(w.serverNode, w.server, "http://127.0.0.1:8080/")
	ev.PodServed = err == nil && own.Responses["server"] > 0
	ev.PodOutcome = answered(own, err)
	svc, err := fetch(w.clientNode, w.client, w.url)
	ev.ServiceServed = err == nil && svc.Responses["server"] > 0
	ev.ServiceOutcome = answered(svc, err)
	runningWithoutEtcd.Record(ev)
}

// answered says who answered a fetch, or why no one did.
func answered(r testapp.FetchResult, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case len(r.Responses) == 0:
		return fmt.Sprintf("no answer to %d requests: %s", r.Requests, r.LastError)
	}
	return fmt.Sprintf("answers by Pod: %v of %d requests", r.Responses, r.Requests)
}

// What ran before etcd stopped, asked while it was stopped.
type runningWithoutEtcdEvidence struct {
	// StoppedSeconds is how long etcd had been stopped when they were asked.
	StoppedSeconds float64 `json:"stoppedSeconds"`
	// PodServed: the server Pod, Running before etcd stopped, answered on
	// its own port (from inside its container, through the node's
	// containerd): its container kept running.
	PodServed bool `json:"podServed"`
	// PodOutcome is who answered, or why no one did.
	PodOutcome string `json:"podOutcome"`
	// ServiceServed: a request from the client Pod to the Service's
	// ClusterIP was answered by the server Pod (kube-proxy's rules and the
	// Pod network kept working).
	ServiceServed bool `json:"serviceServed"`
	// ServiceOutcome is who answered, or why no one did.
	ServiceOutcome string `json:"serviceOutcome"`
}

var runningWithoutEtcd = framework.DeclareEvidence[runningWithoutEtcdEvidence]("runningWithoutEtcd", specEtcdStopped)
