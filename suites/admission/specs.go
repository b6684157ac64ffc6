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
	"github.com/kubeproof/kubeproof/framework/observe"
	"github.com/kubeproof/kubeproof/webhooks"
	"github.com/kubeproof/kubeproof/webhooks/install"
)

const (
	sidecarPath  = "/mutate/sidecar"
	defaultsPath = "/mutate/defaults"
	fillPath     = "/mutate/fill-containers"
	recorderPath = "/allow/recorder"
	limits403    = "/validate/limits/403"
	limitsNone   = "/validate/limits/none"
	patchPath    = "/validate/patch"
)

var _ = ginkgo.Describe("Admission webhooks", func() {
	f := framework.New("admission")

	ginkgo.It("a mutating webhook's changes are what gets stored, and validating webhooks see them",
		framework.Checks("admission-sidecar", "004-MUTATING-SIDECAR", "004-MUTATING-CAN-CHANGE", "004-DEFAULTS", "004-ADMISSION-ORDER"),
		func(ctx ginkgo.SpecContext) {
			srv := deploy(ctx, f)
			uninstallAtEnd(srv, "mesh", "recorder")
			framework.ExpectNoError(srv.Mutating(ctx, "mesh",
				install.Webhook{Name: "sidecar.kubeproof.io", Path: sidecarPath},
				install.Webhook{Name: "defaults.kubeproof.io", Path: defaultsPath}), "install the mutating webhooks")
			framework.ExpectNoError(srv.Validating(ctx, "recorder", install.Webhook{Name: "recorder.kubeproof.io", Path: recorderPath}), "install the recorder")
			effective(ctx, "the sidecar injector and the recorder", func(ctx context.Context) (bool, string) {
				m := marker(true)
				r := create(ctx, f, m, true)
				got := containerNames(storedPod(r).Spec.Containers)
				if !contains(got, webhooks.SidecarName) {
					return false, "marker containers " + strings.Join(got, ",")
				}
				return sawAll(ctx, srv, m.Name, recorderPath)
			})

			ginkgo.By("kubectl apply -f pod.yaml: one container")
			sent := pod("web", true)
			body, err := yaml.Marshal(sent)
			framework.ExpectNoError(err, "encode the Pod")
			res, err := f.Kubectl.Run(ctx, bytes.NewReader(body), "apply", "-f", "-", "--namespace", f.Namespace)
			framework.ExpectNoError(err, "run kubectl apply")
			gomega.Expect(res.ExitCode).To(gomega.Equal(0), res.String())

			stored, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, "web", metav1.GetOptions{})
			framework.ExpectNoError(err, "read the stored Pod")
			framework.Evidence("stored", map[string]any{
				"sentContainers": containerNames(sent.Spec.Containers), "containers": containerNames(stored.Spec.Containers),
				"initContainers": containerNames(stored.Spec.InitContainers), "defaultedLabel": stored.Labels[webhooks.DefaultedLabel],
			})
			saw := callsFor(ctx, srv, "web", false)[recorderPath]
			gomega.Expect(saw).NotTo(gomega.BeEmpty(), "the validating recorder saw no call for the Pod")
			framework.Evidence("validatingSaw", map[string]any{"containers": saw[0].Containers, "initContainers": saw[0].InitContainers})

			ginkgo.By("the injected Pod runs: every container, the sidecar too")
			pods := f.RecordPods(ctx)
			_, ready, _ := framework.WaitForPodEvent(ctx, pods, "the injected Pod to be Ready", func(_ observe.Event, p *corev1.Pod) bool {
				return framework.PodReady(p)
			})
			framework.Evidence("running", map[string]any{"readyContainers": len(ready.Status.ContainerStatuses), "initDone": len(ready.Status.InitContainerStatuses)})
		})

	ginkgo.It("mutation comes before schema validation, validation after it, and persistence last",
		framework.Checks("admission-order", "004-ADMISSION-ORDER", "004-PERSIST-LAST", "004-VALIDATING-NO-CHANGE"),
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
				create(ctx, f, m, true)
				return sawAll(ctx, srv, m.Name, fillPath, recorderPath, limits403)
			})

			ginkgo.By("a Pod without containers: schema validation would refuse it, unless mutation fills it first")
			empty := pod("empty", false)
			empty.Spec.Containers = nil
			filled := create(ctx, f, empty, false)
			framework.Evidence("fill", map[string]any{"code": filled.Code, "message": filled.Status.Message,
				"storedContainers": containerNames(storedPod(filled).Spec.Containers)})
			validated := callsFor(ctx, srv, "empty", false)[recorderPath]
			framework.Evidence("validatingSawFilled", map[string]any{"calls": len(validated), "containers": firstContainers(validated)})

			ginkgo.By("a Pod without limits: the validating webhook denies it")
			denied := create(ctx, f, pod("no-limits", false), false)
			framework.Evidence("denied", map[string]any{"code": denied.Code, "message": denied.Status.Message, "storedAfter": exists(ctx, f, "no-limits")})

			ginkgo.By("a validating webhook that answers with a patch")
			framework.ExpectNoError(srv.Validating(ctx, "patcher", install.Webhook{Name: "patcher.kubeproof.io", Path: patchPath}), "install the patcher")
			effective(ctx, "the patcher", func(ctx context.Context) (bool, string) {
				m := marker(true)
				create(ctx, f, m, true)
				return sawAll(ctx, srv, m.Name, patchPath)
			})
			r := create(ctx, f, pod("patched", true), false)
			framework.Evidence("validatingPatch", map[string]any{"code": r.Code, "message": firstLine(r.Status.Message),
				"labelStored": storedPod(r).Labels["kubeproof.io/validating-patch"] != ""})
		})

	ginkgo.It("mutating webhooks are called one after another, validating webhooks at the same time",
		framework.Checks("admission-concurrency", "004-MUTATING-SEQUENTIAL", "004-VALIDATING-PARALLEL"),
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
				create(ctx, f, m, true)
				return sawAll(ctx, srv, m.Name, a, b, c, d)
			})

			began := time.Now()
			r := create(ctx, f, pod("web", true), false)
			took := time.Since(began)
			gomega.Expect(r.Code).To(gomega.Equal(201), "create the Pod: %s", r.Status.Message)
			calls := callsFor(ctx, srv, "web", false)
			for _, p := range []string{a, b, c, d} {
				gomega.Expect(calls[p]).NotTo(gomega.BeEmpty(), "no call on %s", p)
			}
			ca, cb, cc, cd := calls[a][0], calls[b][0], calls[c][0], calls[d][0]
			first, second := ca, cb
			if cb.Arrived.Before(ca.Arrived) {
				first, second = cb, ca
			}
			overlap := minTime(cc.Departed, cd.Departed).Sub(maxTime(cc.Arrived, cd.Arrived))
			framework.Evidence("mutating", map[string]any{
				"sequential": !second.Arrived.Before(first.Departed), "gapMs": framework.Millis(second.Arrived.Sub(first.Departed)),
			})
			framework.Evidence("validating", map[string]any{
				"parallel": overlap > 0, "overlapMs": framework.Millis(overlap),
				"afterMutation": !minTime(cc.Arrived, cd.Arrived).Before(maxTime(ca.Departed, cb.Departed)),
			})
			framework.Evidence("request", map[string]any{"ms": framework.Millis(took)})

			ginkgo.By("reinvocationPolicy IfNeeded: a mutating webhook is called again when a later one changed the object")
			framework.ExpectNoError(srv.Uninstall(ctx, "slow-mutating", "slow-validating"), "remove the slow webhooks")
			const x, y = "/mutate/label/reinvoke-x", "/mutate/label/reinvoke-y"
			framework.ExpectNoError(srv.Mutating(ctx, "reinvoke",
				install.Webhook{Name: "x.kubeproof.io", Path: x, Reinvocation: admissionregistrationv1.IfNeededReinvocationPolicy},
				install.Webhook{Name: "y.kubeproof.io", Path: y}), "install the reinvoked webhooks")
			effective(ctx, "the reinvoked webhooks", func(ctx context.Context) (bool, string) {
				m := marker(true)
				create(ctx, f, m, true)
				return sawAll(ctx, srv, m.Name, x, y)
			})
			r = create(ctx, f, pod("reinvoked", true), false)
			gomega.Expect(r.Code).To(gomega.Equal(201), "create the Pod: %s", r.Status.Message)
			calls = callsFor(ctx, srv, "reinvoked", false)
			framework.Evidence("reinvocation", map[string]any{"callsToFirst": len(calls[x]), "callsToSecond": len(calls[y])})
		})

	ginkgo.It("a webhook that cannot answer: failurePolicy Fail rejects, Ignore admits, after timeoutSeconds at most",
		framework.Checks("admission-failure", "004-CHAIN-ANY-FAILS"),
		func(ctx ginkgo.SpecContext) {
			srv := deploy(ctx, f)
			uninstallAtEnd(srv, "unreachable-fail", "unreachable-ignore", "slow-fail", "slow-ignore")
			// A Service without endpoints: nothing answers behind it.
			_, err := f.Client.CoreV1().Services(f.Namespace).Create(ctx, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "kubeproof-nowhere"},
				Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "nothing"}, Ports: []corev1.ServicePort{{Port: 443, TargetPort: intstr.FromInt32(8443)}}},
			}, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create a Service nothing answers behind")
			ev := map[string]any{}

			try := func(name, config string, hook install.Webhook, withRecorder bool) {
				ginkgo.GinkgoHelper()
				hooks := []install.Webhook{hook}
				if withRecorder {
					hooks = append(hooks, install.Webhook{Name: "recorder.kubeproof.io", Path: recorderPath})
				}
				framework.ExpectNoError(srv.Validating(ctx, config, hooks...), "install %s", config)
				effective(ctx, config, func(ctx context.Context) (bool, string) {
					m := marker(true)
					r := create(ctx, f, m, true)
					if hook.FailurePolicy == admissionregistrationv1.Fail {
						// Taking effect means failing the marker.
						return r.Code >= 400 && strings.Contains(r.Status.Message, hook.Name), r.Status.Message
					}
					return sawAll(ctx, srv, m.Name, recorderPath)
				})
				began := time.Now()
				r := create(ctx, f, pod(name, true), false)
				ev[name] = map[string]any{"code": r.Code, "message": f.Generalize(firstLine(r.Status.Message), nil), "stored": exists(ctx, f, name),
					"ms": framework.Millis(time.Since(began)), "rejected": r.Code >= 400}
				framework.ExpectNoError(srv.Uninstall(ctx, config), "remove %s", config)
				// Removal takes effect asynchronously too: a Pod must pass
				// again before the next configuration is tried.
				effective(ctx, "the removal of "+config, func(ctx context.Context) (bool, string) {
					r := create(ctx, f, marker(true), true)
					return r.Code == 201, r.Status.Message
				})
			}
			try("unreachable-fail", "unreachable-fail", install.Webhook{Name: "nowhere.kubeproof.io", Path: recorderPath, Service: "kubeproof-nowhere", FailurePolicy: admissionregistrationv1.Fail}, false)
			try("unreachable-ignore", "unreachable-ignore", install.Webhook{Name: "nowhere.kubeproof.io", Path: recorderPath, Service: "kubeproof-nowhere", FailurePolicy: admissionregistrationv1.Ignore}, true)
			try("slow-fail", "slow-fail", install.Webhook{Name: "slow.kubeproof.io", Path: "/delay/4000/slow", TimeoutSeconds: 1, FailurePolicy: admissionregistrationv1.Fail}, false)
			try("slow-ignore", "slow-ignore", install.Webhook{Name: "slow.kubeproof.io", Path: "/delay/4000/slow", TimeoutSeconds: 1, FailurePolicy: admissionregistrationv1.Ignore}, true)
			framework.Evidence("failurePolicy", ev)
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
