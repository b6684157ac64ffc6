// Package admission installs kubeproof's own webhooks (package webhooks) for
// real and observes the admission chain seed 004 describes: mutation first
// (sequential, may change the object), then schema validation, then
// validation (parallel, may only allow or deny), then persistence.
//
// Each spec runs its own webhook server in its own namespace, and its
// configurations only see that namespace, so specs never meet each other's
// webhooks. A configuration takes effect asynchronously: each spec waits,
// within Timeout.Admission, for a marker request (a dry run) to show its
// effect, and then records what the real request did whether or not the
// marker showed it - a chain that never applies a webhook is a finding.
package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/access"
	"github.com/kubeproof/kubeproof/webhooks"
	"github.com/kubeproof/kubeproof/webhooks/install"
)

// deploy runs the webhook server in the spec's namespace, then checks that
// the API server reaches it through its Service: a webhook configuration
// whose server cannot be reached says nothing about the admission chain.
func deploy(ctx context.Context, f *framework.Framework) *install.Server {
	ginkgo.GinkgoHelper()
	f.Needs(framework.Endpoints, framework.PodsCreated)
	f.NeedsAccess(access.Deployments, access.MutatingWebhooks, access.ValidatingWebhooks)
	ginkgo.By("deploying kubeproof's webhook server in the spec's namespace")
	srv, err := install.Deploy(ctx, f.Client, f.Namespace, install.Options{Webhook: images.Webhook.PodRef(), TestApp: images.TestApp.PodRef(), Labels: framework.RunLabels(),
		Down: framework.InjectedFault(framework.FaultWebhookServerDown)}, framework.Timeout.PodStart)
	var stuck *install.StuckError
	switch {
	case errors.As(err, &stuck):
		framework.Unmet("kubelet", "kubeproof's webhook server started", framework.StuckDetail(stuck.Pod, err.Error()))
	case err != nil:
		framework.Unmet("kubeproof webhook server", "kubeproof's webhook server became a ready endpoint of its Service", err.Error())
	}
	reachable(ctx, f, srv)
	return srv
}

// reachable installs a validating webhook that allows everything and
// records its calls, and waits until a marker reaches it. A call that fails
// to connect stops the spec: the API server reaches webhooks through their
// Service's ClusterIP, which kube-proxy routes. A marker that is admitted
// without a call leaves the question to the spec (the chain may not call
// validating webhooks at all).
func reachable(ctx context.Context, f *framework.Framework, srv *install.Server) {
	ginkgo.GinkgoHelper()
	framework.ExpectNoError(srv.Validating(ctx, "reach", install.Webhook{Name: "reach.kubeproof.io", Path: reachPath}), "install the reachability check")
	ginkgo.DeferCleanup(func(ctx context.Context) { _ = srv.Uninstall(ctx, "reach") })
	failure := ""
	called := effective(ctx, "the reachability check", func(ctx context.Context) (bool, string) {
		m := marker(true)
		r := attempt(ctx, f, m)
		// A call the API server could not make: it says so (500).
		if r.Code >= 400 && strings.Contains(r.Status.Message, "failed calling webhook") {
			failure = r.Status.Message
			return false, failure
		}
		if r.Code == 0 { // no answer before the poll's window ended
			return false, r.Status.Message
		}
		failure = ""
		return sawAll(ctx, srv, m.Name, reachPath)
	})
	if !called && failure != "" {
		framework.Unmet("kube-proxy", "the API server reached kubeproof's webhook server through its Service", failure)
	}
	framework.ExpectNoError(srv.Uninstall(ctx, "reach"), "remove the reachability check")
	if called {
		framework.Saw("kube-apiserver", "called an admission webhook through its Service")
	}
}

// uninstallAtEnd removes configurations when the spec ends.
func uninstallAtEnd(srv *install.Server, names ...string) {
	ginkgo.DeferCleanup(func(ctx context.Context) { _ = srv.Uninstall(ctx, names...) })
}

// pod is a Pod from pod.yaml, named, with or without resource limits.
func pod(name string, limits bool) *corev1.Pod {
	var p corev1.Pod
	if err := yaml.Unmarshal(framework.Manifest("pod.yaml"), &p); err != nil {
		panic(err)
	}
	p.Name = name
	if !limits {
		for i := range p.Spec.Containers {
			p.Spec.Containers[i].Resources = corev1.ResourceRequirements{}
		}
	}
	return &p
}

// create POSTs a Pod (dry run if asked) and returns the API server's answer.
func create(ctx context.Context, f *framework.Framework, p any, dryRun bool) framework.Response {
	ginkgo.GinkgoHelper()
	path := "/api/v1/namespaces/" + f.Namespace + "/pods"
	if dryRun {
		path += "?dryRun=All"
	}
	r, err := framework.Request(ctx, f.RESTConfig, "POST", path, p)
	framework.ExpectNoError(err, "create a Pod")
	return r
}

// attempt creates a marker Pod (a dry run) inside effective's poll: a
// request that gets no answer before the poll's window ends is an answer
// with code 0 and the error as its message, not a failed spec.
func attempt(ctx context.Context, f *framework.Framework, p *corev1.Pod) framework.Response {
	r, err := framework.Request(ctx, f.RESTConfig, "POST", "/api/v1/namespaces/"+f.Namespace+"/pods?dryRun=All", p)
	if err != nil {
		r = framework.Response{}
		r.Status.Message = err.Error()
	}
	return r
}

// effective waits, within Timeout.Admission, until a marker request shows
// that configurations took effect (the API server loads them
// asynchronously), and says whether one did. It never fails the spec: a
// configuration that never takes effect is what the spec then records.
func effective(ctx context.Context, what string, try func(ctx context.Context) (bool, string)) bool {
	ginkgo.GinkgoHelper()
	last := ""
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, framework.Timeout.Admission, true, func(ctx context.Context) (bool, error) {
		ok, seen := try(ctx)
		last = seen
		return ok, nil
	})
	if err != nil && ctx.Err() != nil {
		ginkgo.Fail("interrupted while waiting for " + what + " to take effect")
	}
	if err != nil {
		ginkgo.By(fmt.Sprintf("%s did not take effect within %s (last seen: %s); recording what the request does", what, framework.Timeout.Admission, last))
	}
	return err == nil
}

// marker is a dry-run Pod with a unique name, for effective.
func marker(limits bool) *corev1.Pod { return pod("marker-"+rand.String(6), limits) }

// callsFor returns the recorded calls for the Pod named name, by path.
func callsFor(ctx context.Context, srv *install.Server, name string, dryRun bool) map[string][]webhooks.Call {
	ginkgo.GinkgoHelper()
	calls, err := srv.Calls(ctx)
	framework.ExpectNoError(err, "read the webhook calls")
	out := map[string][]webhooks.Call{}
	for _, c := range calls {
		if c.Name == name && c.DryRun == dryRun {
			out[c.Webhook] = append(out[c.Webhook], c)
		}
	}
	return out
}

// sawAll reports whether a marker reached every path.
func sawAll(ctx context.Context, srv *install.Server, name string, paths ...string) (bool, string) {
	calls, err := srv.Calls(ctx)
	if err != nil {
		return false, err.Error()
	}
	seen := map[string]bool{}
	for _, c := range calls {
		if c.Name == name {
			seen[c.Webhook] = true
		}
	}
	for _, p := range paths {
		if !seen[p] {
			return false, fmt.Sprintf("no call on %s yet (calls so far: %d)", p, len(calls))
		}
	}
	return true, "all paths called"
}

// storedPod decodes a created Pod from an answer.
func storedPod(r framework.Response) *corev1.Pod {
	var p corev1.Pod
	_ = json.Unmarshal(r.Body, &p)
	return &p
}

func containerNames(cs []corev1.Container) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func exists(ctx context.Context, f *framework.Framework, name string) bool {
	_, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, name, metav1.GetOptions{})
	return err == nil
}

func contains(s []string, v string) bool { return slices.Contains(s, v) }

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
