// Package kubelet observes what the kubelet does with a bound Pod (seeds
// 002 and 004): the sandbox first and the containers in its network
// namespace, image pull policies, the status it reports, cgroup limits, and
// its probes.
package kubelet

import (
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/observe"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
	"github.com/kubeproof/kubeproof/kube/podstate"
)

// The specs of this package.
const (
	specBoundOnly = "kubelet-bound-only"
	specSandbox   = "kubelet-sandbox"
	specImages    = "kubelet-images"
	specCgroups   = "kubelet-cgroups"
	specProbes    = "kubelet-probes"
)

var _ = ginkgo.Describe("Kubelet", func() {
	f := framework.New("kubelet")

	ginkgo.It("acts only on Pods bound to its node: an unbound Pod never gets a container",
		framework.Checks(specBoundOnly),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.ServiceAccounts, framework.Images)
			events := f.RecordEvents(ctx)
			pods := f.RecordPods(ctx)
			// The control: a Pod bound to a node by its creator, which the
			// kubelet must start - else the window below proves nothing.
			control := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "control"}, Spec: podsecurity.Restricted(corev1.PodSpec{
				NodeName: f.WorkerNodes(ctx)[0].Name, Containers: []corev1.Container{container("app", 8080)}})}
			createPod(ctx, f, control)
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "unbound"}, Spec: podsecurity.Restricted(corev1.PodSpec{
				NodeSelector: map[string]string{"kubeproof.io/no-such-node": f.Namespace},
				Containers:   []corev1.Container{container("app", 8080)},
			})}
			createPod(ctx, f, p)
			framework.RunningPod(ctx, pods, "control")
			gaveUp := framework.AwaitPod(ctx, pods, "unbound", "the scheduler to give up on the Pod", framework.Timeout.Bind, func(p *corev1.Pod) bool {
				c := framework.PodCondition(p, corev1.PodScheduled)
				return c != nil && c.Status == corev1.ConditionFalse
			})
			// An observation window: the kubelet must do nothing with it.
			const window = 10 * time.Second
			framework.ObserveFor(ctx, window)
			reasons := framework.EventReasons(events.Events(), "unbound")
			containerEvents := 0
			for _, r := range reasons {
				if r == "Pulled" || r == "Created" || r == "Started" || r == "Pulling" {
					containerEvents++
				}
			}
			latest, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, "unbound", metav1.GetOptions{})
			framework.ExpectNoError(err, "read the Pod")
			unbound.Record(unboundEvidence{WindowSeconds: window.Seconds(), ControlStarted: true, SchedulerGaveUp: gaveUp.OK,
				Bound: latest.Spec.NodeName != "", ContainerEvents: containerEvents,
				ContainerStatuses: len(latest.Status.ContainerStatuses), Reasons: reasons})
		})

	ginkgo.It("starts the sandbox first; the Pod's containers share its network namespace and IP",
		framework.Checks(specSandbox, framework.Uses(cluster.NodeExec)),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.PodsReady)
			pods := f.RecordPods(ctx)
			createPod(ctx, f, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pair"}, Spec: podsecurity.Restricted(corev1.PodSpec{
				Containers: []corev1.Container{container("web", 8080), container("side", 8081)},
			})})
			p := framework.ReadyPod(ctx, pods, "pair").Pod
			fromSide := f.Fetch(ctx, "pair", "side", "http://localhost:8080/", 1)
			fromWeb := f.Fetch(ctx, "pair", "web", "http://localhost:8081/", 1)
			ev := sandboxEvidence{LocalhostWorks: fromSide.Responses["pair"] == 1 && fromWeb.Responses["pair"] == 1}
			if fromSide.Last != nil && fromWeb.Last != nil {
				ev.SameInterfaces = sameAddrs(fromSide.Last.Interfaces, fromWeb.Last.Interfaces)
				ev.PodIPOnInterfaces = fromSide.Last.HasAddr(p.Status.PodIP)
			}
			if cs, err := f.RuntimeContainers(ctx, "pair"); err == nil {
				first := len(cs) > 0 && cs[0].Kind == "sandbox"
				ev.RuntimeOrder, ev.SandboxFirst = kinds(cs), &first
			} else {
				ev.RuntimeNote = err.Error()
			}
			sandbox.Record(ev)

			ginkgo.By("a Pod whose ConfigMap volume cannot be mounted yet: is its sandbox (its network) made meanwhile?")
			events := f.RecordEvents(ctx)
			app := container("app", 8080)
			app.VolumeMounts = []corev1.VolumeMount{{Name: "later", MountPath: "/etc/later"}}
			createPod(ctx, f, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "needs-config"}, Spec: podsecurity.Restricted(corev1.PodSpec{
				Containers: []corev1.Container{app},
				Volumes: []corev1.Volume{{Name: "later", VolumeSource: corev1.VolumeSource{
					ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "later"}}}}},
			})})
			_, failed := framework.Await(ctx, events, "the kubelet's FailedMount event for the missing ConfigMap", framework.Timeout.PodStart, func(es []observe.Event) bool {
				return framework.FindEvent(es, "needs-config", "FailedMount") != nil
			})
			gate := volumeGateEvidence{FailedMount: failed}
			if failed {
				waiting, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, "needs-config", metav1.GetOptions{})
				framework.ExpectNoError(err, "read the waiting Pod")
				gate.PodIPWhileWaiting = waiting.Status.PodIP
				if c := framework.PodCondition(waiting, corev1.PodReadyToStartContainers); c != nil {
					gate.SandboxReadyWhileWaiting = string(c.Status)
				}
				if cs, err := f.RuntimeContainers(ctx, "needs-config"); err == nil {
					has := len(cs) > 0
					gate.RuntimeSandboxWhileWaiting = &has
				}
				gate.NetworkWhileVolumeMissing = gate.PodIPWhileWaiting != "" || gate.SandboxReadyWhileWaiting == string(corev1.ConditionTrue) ||
					(gate.RuntimeSandboxWhileWaiting != nil && *gate.RuntimeSandboxWhileWaiting)
				_, err = f.Client.CoreV1().ConfigMaps(f.Namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "later"}}, metav1.CreateOptions{})
				framework.ExpectNoError(err, "create the ConfigMap the Pod mounts")
				gate.RanOnceMounted = framework.AwaitPod(ctx, pods, "needs-config", "the Pod to run once its ConfigMap exists", framework.Timeout.PodStart, func(p *corev1.Pod) bool {
					return p.Status.Phase == corev1.PodRunning
				}).OK
			}
			volumeGate.Record(gate)
		})

	// Serial: while the kubelet pulls an image (the Always Pod below, and
	// its retries), it holds a pull intent for that name, and with
	// KubeletEnsureSecretPulledImages (on by default since 1.35) any other
	// Pod of the same image on that node must pull it too, present or not.
	// Where our image is loaded and no registry has it (kind), such a Pod
	// of another spec failed with ErrImagePull (seen once in CI).
	ginkgo.It("image pull policy: defaults by tag, IfNotPresent uses the local image, a missing image fails with an event",
		ginkgo.Serial, framework.Checks(specImages),
		func(ctx ginkgo.SpecContext) {
			repo := strings.Split(images.TestApp.PodRef(), ":")[0]
			policies := map[string]string{}
			for form, image := range map[string]string{
				"latest": repo + ":latest", "noTag": repo, "fixedTag": images.TestApp.PodRef(),
				"digest": repo + "@sha256:" + strings.Repeat("0", 64),
			} {
				p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "policy-" + strings.ToLower(form)},
					Spec: podsecurity.Restricted(corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}})}
				created, err := f.Client.CoreV1().Pods(f.Namespace).Create(ctx, p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				framework.ExpectNoError(err, "dry-run a Pod with image %s", image)
				policies[form] = string(created.Spec.Containers[0].ImagePullPolicy)
			}
			defaultPullPolicy.Record(pullPolicyEvidence{Latest: policies["latest"], NoTag: policies["noTag"], FixedTag: policies["fixedTag"], Digest: policies["digest"]})

			f.Needs(framework.PodsReady)
			events := f.RecordEvents(ctx)
			pods := f.RecordPods(ctx)
			// On the node where the canary ran our image, so it is there
			// whether the nodes had it loaded or pulled it.
			local := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "local"}, Spec: podsecurity.Restricted(corev1.PodSpec{
				NodeName: f.WorkerNodes(ctx)[0].Name, Containers: []corev1.Container{container("app", 8080)}})}
			local.Spec.Containers[0].ImagePullPolicy = corev1.PullIfNotPresent
			missing := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "missing"}, Spec: podsecurity.Restricted(corev1.PodSpec{Containers: []corev1.Container{container("app", 8080)}})}
			missing.Spec.Containers[0].Image = "kubeproof.local/missing:v1"
			missing.Spec.Containers[0].ImagePullPolicy = corev1.PullIfNotPresent
			createPod(ctx, f, local)
			createPod(ctx, f, missing)
			framework.ReadyPod(ctx, pods, "local")
			stuck := framework.AwaitPod(ctx, pods, "missing", "the missing image to fail", framework.Timeout.PodStart, func(p *corev1.Pod) bool {
				if len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Waiting == nil {
					return false
				}
				r := p.Status.ContainerStatuses[0].State.Waiting.Reason
				return r == "ErrImagePull" || r == "ImagePullBackOff"
			})
			evs, _ := framework.Await(ctx, events, "the Pulled and Failed events", framework.Timeout.API, func(es []observe.Event) bool {
				return framework.FindEvent(es, "local", "Pulled") != nil && framework.FindEvent(es, "missing", "Failed") != nil
			})
			ev := imagesEvidence{LocalPulling: framework.FindEvent(evs, "local", "Pulling") != nil, MissingFailed: stuck.OK}
			if pulled := framework.FindEvent(evs, "local", "Pulled"); pulled != nil {
				ev.LocalPulledMessage, ev.LocalAlreadyPresent = pulled.Message, strings.Contains(pulled.Message, "already present on machine")
			}
			if stuck.OK {
				ev.MissingReason = stuck.Pod.Status.ContainerStatuses[0].State.Waiting.Reason
			}
			if failed := framework.FindEvent(evs, "missing", "Failed"); failed != nil {
				ev.MissingEventType, ev.MissingEventMessage = failed.Type, firstLine(failed.Message)
			}
			imagesSeen.Record(ev)

			ginkgo.By("imagePullPolicy Always, for an image the node already has")
			always := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "always"}, Spec: podsecurity.Restricted(corev1.PodSpec{
				NodeName: local.Spec.NodeName, Containers: []corev1.Container{container("app", 8080)}})}
			always.Spec.Containers[0].ImagePullPolicy = corev1.PullAlways
			createPod(ctx, f, always)
			pull := framework.AwaitPull(ctx, events, "always")
			// Any of its pull's events shows the kubelet had the runtime
			// pull: the Pulling event is one sign, not the only one.
			aev := alwaysEvidence{Pulling: pull.Pulling, PullTried: pull.Pulling || pull.Downloaded() || pull.Failed != nil}
			switch {
			case pull.Pulled != nil:
				aev.Outcome, aev.Message = "pulled", pull.Pulled.Message
				if d, ok := podstate.PullDuration(pull.Pulled.Message); ok {
					aev.PullMs = framework.Millis(d)
				}
			case pull.Failed != nil:
				aev.Outcome, aev.Message = "failed", firstLine(pull.Failed.Message)
			}
			alwaysPolicy.Record(aev)
			// Its retries would go on after the spec (the namespace goes
			// later): the Serial specs after this one run testapp Pods too.
			framework.ExpectNoError(f.Client.CoreV1().Pods(f.Namespace).Delete(ctx, "always", metav1.DeleteOptions{}), "delete Pod always")
			_, gone := framework.Await(ctx, pods, "Pod always to be deleted", framework.Timeout.PodStart, func(es []observe.Event) bool {
				return slices.ContainsFunc(es, func(e observe.Event) bool {
					p, ok := e.Object.(*corev1.Pod)
					return ok && p.Name == "always" && e.Type == watch.Deleted
				})
			})
			gomega.Expect(gone).To(gomega.BeTrue(), "Pod always (imagePullPolicy Always) was not deleted within %s", framework.Timeout.PodStart)
		})

	ginkgo.It("resources.limits become the container's cgroup limits, read from inside",
		framework.Checks(specCgroups),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.PodsReady)
			pods := f.RecordPods(ctx)
			// Both limits, as a Pod that asks for them: the claim reads each back.
			app := container("app", 8080)
			app.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
			createPod(ctx, f, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "limited"}, Spec: podsecurity.Restricted(corev1.PodSpec{
				Containers: []corev1.Container{app}})})
			framework.ReadyPod(ctx, pods, "limited")
			res, err := f.Kubectl.Run(ctx, nil, "exec", "limited", "--namespace", f.Namespace, "--", "/kubeproof-testapp", "cgroup")
			framework.ExpectNoError(err, "read the cgroup limits")
			gomega.Expect(res.ExitCode).To(gomega.Equal(0), res.String())
			cgroup.Record(parseCgroup(res.Stdout))
		})

	ginkgo.It("probes: startupProbe holds readiness and liveness back; a failing livenessProbe restarts the container",
		framework.Checks(specProbes),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.PodsReady)
			pods := f.RecordPods(ctx)
			// During its startup the app answers /readyz (a readinessProbe
			// that ran would make it Ready at once) and fails /healthz (a
			// livenessProbe that ran would restart it): only the
			// startupProbe's gating keeps both back.
			const delay = 6 * time.Second
			c := container("app", 8080, "--startup-delay="+delay.String())
			c.StartupProbe = httpProbe("/startupz", 8080)
			c.StartupProbe.FailureThreshold = 60
			c.ReadinessProbe = httpProbe("/readyz", 8080)
			c.LivenessProbe = httpProbe("/healthz", 8080)
			createPod(ctx, f, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "probed"}, Spec: podsecurity.Restricted(corev1.PodSpec{Containers: []corev1.Container{c}})})
			running := framework.RunningPod(ctx, pods, "probed")
			rd := framework.ReadyPod(ctx, pods, "probed")
			started := running.Pod.Status.ContainerStatuses[0].State.Running.StartedAt.Time
			startup.Record(startupEvidence{
				StartupDelaySeconds: delay.Seconds(), RunningToReadyMs: framework.Millis(rd.At.Sub(running.At)),
				StartedToReadyMs:      framework.Millis(rd.At.Sub(started)),
				RestartsDuringStartup: rd.Pod.Status.ContainerStatuses[0].RestartCount,
			})

			ginkgo.By("switching the app unhealthy: the livenessProbe fails")
			f.Fetch(ctx, "probed", "", "http://localhost:8080/control?healthy=false", 1)
			switched := time.Now()
			window := framework.Timeout.Controller
			restarted := framework.AwaitPod(ctx, pods, "probed", "the container to be restarted", window, func(p *corev1.Pod) bool {
				return len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].RestartCount >= 1
			})
			ev := livenessEvidence{Restarted: restarted.OK, WindowSeconds: window.Seconds()}
			if restarted.Pod != nil && len(restarted.Pod.Status.ContainerStatuses) > 0 {
				ev.RestartCount = restarted.Pod.Status.ContainerStatuses[0].RestartCount
			}
			if restarted.OK {
				ev.RestartedAfterMs = framework.Millis(restarted.At.Sub(switched))
			}
			liveness.Record(ev)
		})
})

func kinds(cs []framework.RuntimeContainer) []string {
	var out []string
	for _, c := range cs {
		if c.Kind == "sandbox" {
			out = append(out, "sandbox")
		} else {
			out = append(out, "container:"+c.Name)
		}
	}
	return out
}

func sameAddrs(a, b map[string][]string) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for k, v := range a {
		if strings.Join(v, ",") != strings.Join(b[k], ",") {
			return false
		}
	}
	return true
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
