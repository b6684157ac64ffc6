// Package admission installs kubeproof's own webhooks (package webhooks) for
// real and observes the admission chain seed 004 describes: mutation first
// (sequential, may change the object), then schema validation, then
// validation (parallel, may only allow or deny), then persistence.
//
// Each spec runs its own webhook server in its own namespace, and its
// configurations only see that namespace, so specs never meet each other's
// webhooks. A configuration counts as installed only once a marker request
// shows its effect.
package admission

import (
	"context"
	"encoding/json"
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

	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/images"
	"github.com/kubeproof/kubeproof/webhooks"
	"github.com/kubeproof/kubeproof/webhooks/install"
)

// installTimeout bounds the wait for a webhook server or configuration.
const installTimeout = 2 * time.Minute

// deploy runs the webhook server in the spec's namespace; configurations
// named in cleanup are removed when the spec ends.
func deploy(ctx context.Context, f *framework.Framework) *install.Server {
	ginkgo.GinkgoHelper()
	ginkgo.By("deploying kubeproof's webhook server in the spec's namespace")
	srv, err := install.Deploy(ctx, f.Client, f.Namespace, install.Images{Webhook: images.Webhook.Ref, TestApp: images.TestApp.Ref}, installTimeout)
	framework.ExpectNoError(err, "deploy the webhook server")
	return srv
}

// uninstallAtEnd removes configurations when the spec ends.
func uninstallAtEnd(srv *install.Server, names ...string) {
	ginkgo.DeferCleanup(func(ctx context.Context) { _ = srv.Uninstall(ctx, names...) })
}

// pod is a Pod from pod.yaml, named, with or without resource limits.
func pod(name string, limits bool) *corev1.Pod {
	var p corev1.Pod
	if err := yaml.Unmarshal(fixtures.MustRead("pod.yaml"), &p); err != nil {
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

// effective waits until a marker request (a dry run, which admission sees
// but nothing stores) shows that the configurations took effect: the API
// server loads configurations asynchronously.
func effective(ctx context.Context, what string, try func(ctx context.Context) (bool, string)) {
	ginkgo.GinkgoHelper()
	last := ""
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, installTimeout, true, func(ctx context.Context) (bool, error) {
		ok, seen := try(ctx)
		last = seen
		return ok, nil
	})
	framework.ExpectNoError(err, "wait for %s to take effect (last seen: %s)", what, last)
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
