package admission

import (
	"bytes"
	"context"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/webhooks"
	"github.com/kubeproof/kubeproof/webhooks/install"
)

const (
	sidecarPath  = "/mutate/sidecar"
	defaultsPath = "/mutate/defaults"
	fillPath     = "/mutate/fill-containers"
	recorderPath = "/allow/recorder"
	reachPath    = "/allow/reach"
	limits403    = "/validate/limits/403"
	limitsNone   = "/validate/limits/none"
	patchPath    = "/validate/patch"
)

// The specs of this package.
const (
	specSidecar     = "admission-sidecar"
	specOrder       = "admission-order"
	specConcurrency = "admission-concurrency"
	specFailure     = "admission-failure"
)

var _ = ginkgo.Describe("Admission webhooks", func() {
	f := framework.New("admission")

	ginkgo.It("a mutating webhook's changes are what gets stored, and validating webhooks see them",
		framework.Checks(specSidecar),
		framework.Takes(22),
		func(ctx ginkgo.SpecContext) {
			srv := deploy(ctx, f)
			uninstallAtEnd(srv, "mesh", "recorder")
			framework.ExpectNoError(srv.Mutating(ctx, "mesh",
				install.Webhook{Name: "sidecar.kubeproof.io", Path: sidecarPath},
				install.Webhook{Name: "defaults.kubeproof.io", Path: defaultsPath}), "install the mutating webhooks")
			framework.ExpectNoError(srv.Validating(ctx, "recorder", install.Webhook{Name: "recorder.kubeproof.io", Path: recorderPath}), "install the recorder")
			effective(ctx, "the sidecar injector and the recorder", func(ctx context.Context) (bool, string) {
				m := marker(true)
				r := attempt(ctx, f, m)
				got := containerNames(storedPod(r).Spec.Containers)
				if !contains(got, webhooks.SidecarName) {
					return false, "marker containers " + strings.Join(got, ",")
				}
				return sawAll(ctx, srv, m.Name, recorderPath)
			})

			ginkgo.By("kubectl apply -f pod.yaml: one container")
			pods := f.RecordPods(ctx)
			sent := pod("web", true)
			body, err := yaml.Marshal(sent)
			framework.ExpectNoError(err, "encode the Pod")
			res, err := f.Kubectl.Run(ctx, bytes.NewReader(body), "apply", "-f", "-", "--namespace", f.Namespace)
			framework.ExpectNoError(err, "run kubectl apply")
			gomega.Expect(res.ExitCode).To(gomega.Equal(0), res.String())

			got, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, "web", metav1.GetOptions{})
			framework.ExpectNoError(err, "read the stored Pod")
			stored.Record(storedEvidence{
				SentContainers: containerNames(sent.Spec.Containers), Containers: containerNames(got.Spec.Containers),
				InitContainers: containerNames(got.Spec.InitContainers), DefaultedLabel: got.Labels[webhooks.DefaultedLabel],
			})
			saw := validatingSawEvidence{}
			if calls := callsFor(ctx, srv, "web", false)[recorderPath]; len(calls) > 0 {
				saw = validatingSawEvidence{Called: true, Containers: calls[0].Containers, InitContainers: calls[0].InitContainers}
			}
			validatingSaw.Record(saw)

			ginkgo.By("the stored Pod runs: every container it has, the sidecar too")
			rd := framework.ReadyPod(ctx, pods, "web").Pod
			ev := runningEvidence{Containers: len(rd.Spec.Containers)}
			for _, cs := range rd.Status.ContainerStatuses {
				if cs.Ready {
					ev.ReadyContainers++
				}
			}
			for _, cs := range rd.Status.InitContainerStatuses {
				if t := cs.State.Terminated; t != nil && t.ExitCode == 0 {
					ev.InitDone++
				}
			}
			running.Record(ev)
		})

	ginkgo.It("mutation comes before schema validation, validation after it, and persistence last",
		framework.Checks(specOrder),
		func(ctx ginkgo.SpecContext) {
			srv := deploy(ctx, f)
			uninstallAtEnd(srv, "fill", "checks", "patcher")
			framework.ExpectNoError(srv.Mutating(ctx, "fill", install.Webhook{Name: "fill.kubeproof.io", Path: fillPath}), "install the filler")
			framework.ExpectNoError(srv.Validating(ctx, "checks",
				install.Webhook{Name: "recorder.kubeproof.io", Path: recorderPath},
				install.Webhook{Name: "limits.kubeproof.io", Path: limits403}), "install the validators")
			effective(ctx, "the filler and the validators", func(ctx context.Context) (bool, string) {
				m := marker(false)
				m.Spec.Containers = nil
				attempt(ctx, f, m)
				return sawAll(ctx, srv, m.Name, fillPath, recorderPath, limits403)
			})

			ginkgo.By("a Pod without containers: schema validation would refuse it, unless mutation fills it first")
			empty := pod("empty", false)
			empty.Spec.Containers = nil
			filled := create(ctx, f, empty, false)
			fill.Record(fillEvidence{Code: filled.Code, Message: filled.Status.Message, StoredContainers: containerNames(storedPod(filled).Spec.Containers)})
			validated := callsFor(ctx, srv, "empty", false)[recorderPath]
			validatingSawFill.Record(validatingSawFilledEvidence{Calls: len(validated), Containers: firstContainers(validated)})

			ginkgo.By("a Pod without limits: the validating webhook denies it")
			d := create(ctx, f, pod("no-limits", false), false)
			denied.Record(deniedEvidence{Code: d.Code, Message: d.Status.Message, StoredAfter: exists(ctx, f, "no-limits")})

			ginkgo.By("a validating webhook that answers with a patch")
			framework.ExpectNoError(srv.Validating(ctx, "patcher", install.Webhook{Name: "patcher.kubeproof.io", Path: patchPath}), "install the patcher")
			effective(ctx, "the patcher", func(ctx context.Context) (bool, string) {
				m := marker(true)
				attempt(ctx, f, m)
				return sawAll(ctx, srv, m.Name, patchPath)
			})
			r := create(ctx, f, pod("patched", true), false)
			ev := validatingPatchEvidence{Code: r.Code, Message: firstLine(r.Status.Message)}
			switch {
			case r.Code >= 400 && strings.Contains(r.Status.Message, "may not return response.patch"):
				ev.Outcome = "refused"
			case r.Code == 201 && storedPod(r).Labels["kubeproof.io/validating-patch"] != "":
				ev.Outcome = "admitted-with-patch"
			case r.Code == 201:
				ev.Outcome = "admitted-without-patch"
			default:
				framework.Unmet("kubeproof webhook server", "the patching validating webhook answered", ev.Message)
			}
			validatingPatch.Record(ev)
		})

	ginkgo.It("mutating webhooks are called one after another, validating webhooks at the same time",
		framework.Checks(specConcurrency),
		func(ctx ginkgo.SpecContext) {
			srv := deploy(ctx, f)
			uninstallAtEnd(srv, "slow-mutating", "slow-validating", "reinvoke")
			const a, b, c, d = "/delay/1000/mutating-a", "/delay/1000/mutating-b", "/delay/1000/validating-c", "/delay/1000/validating-d"
			framework.ExpectNoError(srv.Mutating(ctx, "slow-mutating",
				install.Webhook{Name: "a.kubeproof.io", Path: a}, install.Webhook{Name: "b.kubeproof.io", Path: b}), "install the slow mutating webhooks")
			framework.ExpectNoError(srv.Validating(ctx, "slow-validating",
				install.Webhook{Name: "c.kubeproof.io", Path: c}, install.Webhook{Name: "d.kubeproof.io", Path: d}), "install the slow validating webhooks")
			effective(ctx, "the slow webhooks", func(ctx context.Context) (bool, string) {
				m := marker(true)
				attempt(ctx, f, m)
				return sawAll(ctx, srv, m.Name, a, b, c, d)
			})

			began := time.Now()
			r := create(ctx, f, pod("web", true), false)
			concurrentRequest.Record(requestEvidence{Code: r.Code, Ms: framework.Millis(time.Since(began))})
			calls := callsFor(ctx, srv, "web", false)
			mev := mutatingEvidence{CalledBoth: len(calls[a]) > 0 && len(calls[b]) > 0}
			if mev.CalledBoth {
				first, second := calls[a][0], calls[b][0]
				if second.Arrived.Before(first.Arrived) {
					first, second = second, first
				}
				mev.Sequential, mev.GapMs = !second.Arrived.Before(first.Departed), framework.Millis(second.Arrived.Sub(first.Departed))
			}
			mutatingCalls.Record(mev)
			vev := validatingEvidence{CalledBoth: len(calls[c]) > 0 && len(calls[d]) > 0}
			if vev.CalledBoth {
				cc, cd := calls[c][0], calls[d][0]
				overlap := minTime(cc.Departed, cd.Departed).Sub(maxTime(cc.Arrived, cd.Arrived))
				vev.Parallel, vev.OverlapMs = overlap > 0, framework.Millis(overlap)
				if mev.CalledBoth {
					vev.AfterMutation = !minTime(cc.Arrived, cd.Arrived).Before(maxTime(calls[a][0].Departed, calls[b][0].Departed))
				}
			}
			validatingCalls.Record(vev)

			ginkgo.By("reinvocationPolicy IfNeeded: a mutating webhook is called again when a later one changed the object")
			framework.ExpectNoError(srv.Uninstall(ctx, "slow-mutating", "slow-validating"), "remove the slow webhooks")
			const x, y = "/mutate/label/reinvoke-x", "/mutate/label/reinvoke-y"
			framework.ExpectNoError(srv.Mutating(ctx, "reinvoke",
				install.Webhook{Name: "x.kubeproof.io", Path: x, Reinvocation: admissionregistrationv1.IfNeededReinvocationPolicy},
				install.Webhook{Name: "y.kubeproof.io", Path: y}), "install the reinvoked webhooks")
			effective(ctx, "the reinvoked webhooks", func(ctx context.Context) (bool, string) {
				m := marker(true)
				attempt(ctx, f, m)
				return sawAll(ctx, srv, m.Name, x, y)
			})
			create(ctx, f, pod("reinvoked", true), false)
			calls = callsFor(ctx, srv, "reinvoked", false)
			reinvocation.Record(reinvocationEvidence{CallsToFirst: len(calls[x]), CallsToSecond: len(calls[y])})
		})

	ginkgo.It("a webhook that cannot answer: failurePolicy Fail rejects, Ignore admits, after timeoutSeconds at most",
		framework.Checks(specFailure),
		func(ctx ginkgo.SpecContext) {
			srv := deploy(ctx, f)
			uninstallAtEnd(srv, "unreachable-fail", "unreachable-ignore", "slow-fail", "slow-ignore")
			// A Service without endpoints: nothing answers behind it.
			_, err := f.Client.CoreV1().Services(f.Namespace).Create(ctx, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "kubeproof-nowhere"},
				Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "nothing"}, Ports: []corev1.ServicePort{{Port: 443, TargetPort: intstr.FromInt32(8443)}}},
			}, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create a Service nothing answers behind")
			ev := failurePolicyEvidence{}

			try := func(name string, into *failureCase, hook install.Webhook, withRecorder bool) {
				ginkgo.GinkgoHelper()
				hooks := []install.Webhook{hook}
				if withRecorder {
					hooks = append(hooks, install.Webhook{Name: "recorder.kubeproof.io", Path: recorderPath})
				}
				framework.ExpectNoError(srv.Validating(ctx, name, hooks...), "install %s", name)
				effective(ctx, name, func(ctx context.Context) (bool, string) {
					m := marker(true)
					r := attempt(ctx, f, m)
					if hook.FailurePolicy == admissionregistrationv1.Fail {
						// Taking effect means failing the marker.
						return r.Code >= 400 && strings.Contains(r.Status.Message, hook.Name), r.Status.Message
					}
					return sawAll(ctx, srv, m.Name, recorderPath)
				})
				began := time.Now()
				r := create(ctx, f, pod(name, true), false)
				*into = failureCase{Code: r.Code, Message: f.Generalize(firstLine(r.Status.Message), nil), Stored: exists(ctx, f, name),
					Ms:       framework.Millis(time.Since(began)),
					Rejected: r.Code >= 400 && strings.Contains(r.Status.Message, "failed calling webhook \""+hook.Name+"\"")}
				framework.ExpectNoError(srv.Uninstall(ctx, name), "remove %s", name)
				// Removal takes effect asynchronously too: a Pod must pass
				// again before the next configuration is tried.
				effective(ctx, "the removal of "+name, func(ctx context.Context) (bool, string) {
					r := attempt(ctx, f, marker(true))
					return r.Code == 201, r.Status.Message
				})
			}
			try("unreachable-fail", &ev.UnreachableFail, install.Webhook{Name: "nowhere.kubeproof.io", Path: recorderPath, Service: "kubeproof-nowhere", FailurePolicy: admissionregistrationv1.Fail}, false)
			try("unreachable-ignore", &ev.UnreachableIgnore, install.Webhook{Name: "nowhere.kubeproof.io", Path: recorderPath, Service: "kubeproof-nowhere", FailurePolicy: admissionregistrationv1.Ignore}, true)
			try("slow-fail", &ev.SlowFail, install.Webhook{Name: "slow.kubeproof.io", Path: "/delay/4000/slow", TimeoutSeconds: 1, FailurePolicy: admissionregistrationv1.Fail}, false)
			try("slow-ignore", &ev.SlowIgnore, install.Webhook{Name: "slow.kubeproof.io", Path: "/delay/4000/slow", TimeoutSeconds: 1, FailurePolicy: admissionregistrationv1.Ignore}, true)
			failurePolicySeen.Record(ev)
		})
})

func firstContainers(calls []webhooks.Call) []string {
	if len(calls) == 0 {
		return nil
	}
	return calls[0].Containers
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
