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

// Evidence: what the specs above record, under the names the claims files use.

// The Pod kubectl sent and the Pod the API server stored.
type storedEvidence struct {
	// SentContainers: the names of the containers in the Pod kubectl sent.
	SentContainers []string `json:"sentContainers"`
	// Containers: the names of the stored Pod's containers.
	Containers []string `json:"containers"`
	// InitContainers: the names of the stored Pod's init containers.
	InitContainers []string `json:"initContainers"`
	// DefaultedLabel: the value of the label the defaulting webhook sets,
	// on the stored Pod ("" if absent).
	DefaultedLabel string `json:"defaultedLabel"`
}

// What the validating recorder received for the Pod.
type validatingSawEvidence struct {
	// Called: the validating recorder webhook received the Pod.
	Called bool `json:"called"`
	// Containers and InitContainers are the container names of the Pod it
	// first received.
	Containers     []string `json:"containers"`
	InitContainers []string `json:"initContainers"`
}

// The stored Pod once Ready: how many of its containers are ready.
type runningEvidence struct {
	// Containers is how many containers the Ready Pod's spec has.
	Containers int `json:"containers"`
	// ReadyContainers is how many of their statuses say ready.
	ReadyContainers int `json:"readyContainers"`
	// InitDone is how many init containers terminated with exit code 0.
	InitDone int `json:"initDone"`
}

// A Pod sent without containers, to a chain whose mutating webhook fills
// them in.
type fillEvidence struct {
	// Code is the status code of the create of a Pod without containers.
	Code int `json:"code"`
	// Message is the answer's Status message.
	Message string `json:"message"`
	// StoredContainers are the container names of the Pod the answer returned
	// (as stored).
	StoredContainers []string `json:"storedContainers"`
}

// What the validating recorder received for the Pod sent without containers.
type validatingSawFilledEvidence struct {
	// Calls is how many calls of the validating recorder concerned that Pod.
	Calls int `json:"calls"`
	// Containers are the container names in the first of them.
	Containers []string `json:"containers"`
}

// A Pod a validating webhook denies.
type deniedEvidence struct {
	// Code is the status code of the create of a Pod without limits.
	Code int `json:"code"`
	// Message is the answer's Status message.
	Message string `json:"message"`
	// StoredAfter: the Pod existed afterwards.
	StoredAfter bool `json:"storedAfter"`
}

// A validating webhook that answers with a patch: what became of it.
type validatingPatchEvidence struct {
	// Outcome: "refused" (the API server rejects a validating webhook's
	// response that carries a patch), "admitted-without-patch" or
	// "admitted-with-patch".
	Outcome string `json:"outcome"`
	// Code and Message are the status code and first line of the Status
	// message of the create.
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Two slow mutating webhooks: one after the other, or at the same time?
type mutatingEvidence struct {
	// CalledBoth: both slow mutating webhooks received the Pod.
	CalledBoth bool `json:"calledBoth"`
	// Sequential: the second call arrived no earlier than the first was
	// answered.
	Sequential bool `json:"sequential"`
	// GapMs is the time from the first answer to the second call's arrival
	// (negative when they overlapped).
	GapMs float64 `json:"gapMs"`
}

// Two slow validating webhooks.
type validatingEvidence struct {
	// CalledBoth: both slow validating webhooks received the Pod.
	CalledBoth bool `json:"calledBoth"`
	// Parallel: their calls overlapped in time; OverlapMs is by how much.
	Parallel  bool    `json:"parallel"`
	OverlapMs float64 `json:"overlapMs"`
	// AfterMutation: both arrived no earlier than the last mutating call was
	// answered.
	AfterMutation bool `json:"afterMutation"`
}

// The create that passed the two slow mutating and two slow validating
// webhooks.
type requestEvidence struct {
	// Code is the status code of the create that passed the slow webhooks.
	Code int `json:"code"`
	// Ms is how long that create took.
	Ms float64 `json:"ms"`
}

// Two mutating webhooks that label the Pod, the first with
// reinvocationPolicy IfNeeded.
type reinvocationEvidence struct {
	// CallsToFirst and CallsToSecond are how many calls the first webhook
	// (reinvocationPolicy IfNeeded) and the second received for the Pod.
	CallsToFirst  int `json:"callsToFirst"`
	CallsToSecond int `json:"callsToSecond"`
}

// One webhook that cannot answer, under one failurePolicy.
type failureCase struct {
	// Code is the status code of the create.
	Code int `json:"code"`
	// Message is the first line of the answer's Status message, generalized.
	Message string `json:"message"`
	// Stored: the Pod existed afterwards.
	Stored bool `json:"stored"`
	// Ms is how long the create took.
	Ms float64 `json:"ms"`
	// Rejected: the request was refused because the webhook could not
	// answer (the API server says it failed calling it).
	Rejected bool `json:"rejected"`
}

// A webhook that cannot answer, under each failurePolicy.
type failurePolicyEvidence struct {
	// UnreachableFail and UnreachableIgnore: a webhook behind a Service
	// without endpoints, with failurePolicy Fail and Ignore.
	UnreachableFail   failureCase `json:"unreachable-fail"`
	UnreachableIgnore failureCase `json:"unreachable-ignore"`
	// SlowFail and SlowIgnore: a webhook that answers after 4 s with
	// timeoutSeconds 1, with failurePolicy Fail and Ignore.
	SlowFail   failureCase `json:"slow-fail"`
	SlowIgnore failureCase `json:"slow-ignore"`
}

var (
	stored            = framework.DeclareEvidence[storedEvidence]("stored", specSidecar)
	validatingSaw     = framework.DeclareEvidence[validatingSawEvidence]("validatingSaw", specSidecar)
	running           = framework.DeclareEvidence[runningEvidence]("running", specSidecar)
	fill              = framework.DeclareEvidence[fillEvidence]("fill", specOrder)
	validatingSawFill = framework.DeclareEvidence[validatingSawFilledEvidence]("validatingSawFilled", specOrder)
	denied            = framework.DeclareEvidence[deniedEvidence]("denied", specOrder)
	validatingPatch   = framework.DeclareEvidence[validatingPatchEvidence]("validatingPatch", specOrder)
	mutatingCalls     = framework.DeclareEvidence[mutatingEvidence]("mutating", specConcurrency)
	validatingCalls   = framework.DeclareEvidence[validatingEvidence]("validating", specConcurrency)
	concurrentRequest = framework.DeclareEvidence[requestEvidence]("request", specConcurrency)
	reinvocation      = framework.DeclareEvidence[reinvocationEvidence]("reinvocation", specConcurrency)
	failurePolicySeen = framework.DeclareEvidence[failurePolicyEvidence]("failurePolicy", specFailure)
)
