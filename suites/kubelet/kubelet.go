// Package kubelet observes what the kubelet does with a bound Pod (seeds
// 002 and 004): the sandbox first and the containers in its network
// namespace, image pull policies, the status it reports, cgroup limits, and
// its probes.
package kubelet

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/images"
	"github.com/kubeproof/kubeproof/framework/observe"
)

// container is a test-app container serving on port.
func container(name string, port int32, args ...string) corev1.Container {
	lim := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	return corev1.Container{
		Name: name, Image: images.TestApp.Ref,
		Args:      append([]string{"serve", "--listen=:" + strconv.Itoa(int(port))}, args...),
		Ports:     []corev1.ContainerPort{{ContainerPort: port}},
		Env:       []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
		Resources: corev1.ResourceRequirements{Requests: lim, Limits: lim},
	}
}

func httpProbe(path string, port int32) *corev1.Probe {
	return &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 3, ProbeHandler: corev1.ProbeHandler{
		HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(port)}}}
}

func createPod(ctx context.Context, f *framework.Framework, p *corev1.Pod) {
	ginkgo.GinkgoHelper()
	_, err := f.Client.CoreV1().Pods(f.Namespace).Create(ctx, p, metav1.CreateOptions{})
	framework.ExpectNoError(err, "create Pod %s", p.Name)
}

func ready(ctx context.Context, pods *observe.Recorder, name string) *corev1.Pod {
	ginkgo.GinkgoHelper()
	_, p, _ := framework.WaitForPodEvent(ctx, pods, name+" to be Ready", func(_ observe.Event, p *corev1.Pod) bool {
		return p.Name == name && framework.PodReady(p)
	})
	return p
}

var _ = ginkgo.Describe("Kubelet", func() {
	f := framework.New("kubelet")

	ginkgo.It("acts only on Pods bound to its node: an unbound Pod never gets a container",
		framework.Checks("kubelet-bound-only", "000-KUBELET-ONLY-BOUND"),
		func(ctx ginkgo.SpecContext) {
			events := f.RecordEvents(ctx)
			pods := f.RecordPods(ctx)
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "unbound"}, Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"kubeproof.io/no-such-node": f.Namespace},
				Containers:   []corev1.Container{container("app", 8080)},
			}}
			createPod(ctx, f, p)
			framework.WaitForPodEvent(ctx, pods, "the scheduler to give up on the Pod", func(_ observe.Event, p *corev1.Pod) bool {
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
			framework.Evidence("unbound", map[string]any{"windowSeconds": window.Seconds(), "containerEvents": containerEvents,
				"containerStatuses": len(latest.Status.ContainerStatuses), "reasons": reasons})
		})

	ginkgo.It("starts the sandbox first; the Pod's containers share its network namespace and IP",
		framework.Checks("kubelet-sandbox", "004-SANDBOX-FIRST", "004-LOCALHOST"),
		func(ctx ginkgo.SpecContext) {
			pods := f.RecordPods(ctx)
			createPod(ctx, f, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pair"}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{container("web", 8080), container("side", 8081)},
			}})
			p := ready(ctx, pods, "pair")
			fromSide := f.Fetch(ctx, "pair", "side", "http://localhost:8080/", 1)
			fromWeb := f.Fetch(ctx, "pair", "web", "http://localhost:8081/", 1)
			gomega.Expect(fromSide.Last).NotTo(gomega.BeNil(), "side could not reach web on localhost: %s", fromSide.LastError)
			gomega.Expect(fromWeb.Last).NotTo(gomega.BeNil(), "web could not reach side on localhost: %s", fromWeb.LastError)
			ev := map[string]any{
				"localhostWorks":    fromSide.Responses["pair"] == 1 && fromWeb.Responses["pair"] == 1,
				"sameInterfaces":    sameAddrs(fromSide.Last.Interfaces, fromWeb.Last.Interfaces),
				"podIPOnInterfaces": hasAddr(fromSide.Last.Interfaces, p.Status.PodIP),
			}
			if cs, err := f.RuntimeContainers(ctx, "pair"); err == nil {
				ev["runtimeOrder"] = kinds(cs)
				ev["sandboxFirst"] = len(cs) > 0 && cs[0].Kind == "sandbox"
			} else {
				ev["runtimeNote"] = err.Error()
			}
			framework.Evidence("sandbox", ev)
		})

	ginkgo.It("image pull policy: defaults by tag, IfNotPresent uses the local image, a missing image fails with an event",
		framework.Checks("kubelet-images", "002-PULL-POLICY-DEFAULT", "002-IFNOTPRESENT", "002-PULL-FAILED-EVENT"),
		func(ctx ginkgo.SpecContext) {
			repo := strings.Split(images.TestApp.Ref, ":")[0]
			policies := map[string]string{}
			for form, image := range map[string]string{
				"latest": repo + ":latest", "noTag": repo, "fixedTag": images.TestApp.Ref,
				"digest": repo + "@sha256:" + strings.Repeat("0", 64),
			} {
				p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "policy-" + strings.ToLower(form)},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}
				created, err := f.Client.CoreV1().Pods(f.Namespace).Create(ctx, p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				framework.ExpectNoError(err, "dry-run a Pod with image %s", image)
				policies[form] = string(created.Spec.Containers[0].ImagePullPolicy)
			}
			framework.Evidence("defaultPullPolicy", policies)

			events := f.RecordEvents(ctx)
			pods := f.RecordPods(ctx)
			local := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "local"}, Spec: corev1.PodSpec{Containers: []corev1.Container{container("app", 8080)}}}
			local.Spec.Containers[0].ImagePullPolicy = corev1.PullIfNotPresent
			missing := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "missing"}, Spec: corev1.PodSpec{Containers: []corev1.Container{container("app", 8080)}}}
			missing.Spec.Containers[0].Image = "kubeproof.local/missing:v1"
			missing.Spec.Containers[0].ImagePullPolicy = corev1.PullIfNotPresent
			createPod(ctx, f, local)
			createPod(ctx, f, missing)
			ready(ctx, pods, "local")
			_, stuck, _ := framework.WaitForPodEvent(ctx, pods, "the missing image to fail", func(_ observe.Event, p *corev1.Pod) bool {
				if p.Name != "missing" || len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Waiting == nil {
					return false
				}
				r := p.Status.ContainerStatuses[0].State.Waiting.Reason
				return r == "ErrImagePull" || r == "ImagePullBackOff"
			})
			evs, err := events.WaitFor(ctx, framework.PodStartTimeout, "the Pulled and Failed events", func(es []observe.Event) bool {
				return framework.FindEvent(es, "local", "Pulled") != nil && framework.FindEvent(es, "missing", "Failed") != nil
			}, nil)
			framework.ExpectNoError(err, "wait for the image events")
			pulled := framework.FindEvent(evs, "local", "Pulled")
			failed := framework.FindEvent(evs, "missing", "Failed")
			framework.Evidence("images", map[string]any{
				"localPulledMessage": pulled.Message, "localAlreadyPresent": strings.Contains(pulled.Message, "already present on machine"),
				"localPulling":  framework.FindEvent(evs, "local", "Pulling") != nil,
				"missingReason": stuck.Status.ContainerStatuses[0].State.Waiting.Reason, "missingEventType": failed.Type,
				"missingEventMessage": firstLine(failed.Message),
			})
		})

	ginkgo.It("resources.limits become the container's cgroup limits, read from inside",
		framework.Checks("kubelet-cgroups", "004-LIMITS-CGROUP"),
		func(ctx ginkgo.SpecContext) {
			pods := f.RecordPods(ctx)
			createPod(ctx, f, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "limited"}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{container("app", 8080)}}})
			ready(ctx, pods, "limited")
			res, err := f.Kubectl.Run(ctx, nil, "exec", "limited", "--namespace", f.Namespace, "--", "/kubeproof-testapp", "cgroup")
			framework.ExpectNoError(err, "read the cgroup limits")
			gomega.Expect(res.ExitCode).To(gomega.Equal(0), res.String())
			limits := parseCgroup(res.Stdout)
			framework.Evidence("cgroup", merge(limits, map[string]any{"limitCPU": "100m", "limitMemory": "64Mi"}))
		})

	ginkgo.It("probes: startupProbe holds readiness and liveness back; a failing livenessProbe restarts the container",
		framework.Checks("kubelet-probes", "004-STARTUP-GATES", "004-LIVENESS"),
		func(ctx ginkgo.SpecContext) {
			pods := f.RecordPods(ctx)
			c := container("app", 8080, "--startup-delay=6s")
			c.StartupProbe = httpProbe("/startupz", 8080)
			c.StartupProbe.FailureThreshold = 60
			c.ReadinessProbe = httpProbe("/readyz", 8080)
			c.LivenessProbe = httpProbe("/healthz", 8080)
			createPod(ctx, f, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "probed"}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}}})
			iRunning, running, events := framework.WaitForPodEvent(ctx, pods, "the container to run", func(_ observe.Event, p *corev1.Pod) bool {
				return len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].State.Running != nil
			})
			iReady, readyPod, events := framework.WaitForPodEvent(ctx, pods, "the Pod to be Ready", func(_ observe.Event, p *corev1.Pod) bool {
				return framework.PodReady(p)
			})
			started := running.Status.ContainerStatuses[0].State.Running.StartedAt.Time
			startup := map[string]any{
				"startupDelaySeconds": 6, "runningToReadyMs": framework.Millis(events[iReady].Received.Sub(events[iRunning].Received)),
				"startedToReadyMs":      framework.Millis(events[iReady].Received.Sub(started)),
				"restartsDuringStartup": readyPod.Status.ContainerStatuses[0].RestartCount,
			}
			framework.Evidence("startup", startup)

			ginkgo.By("switching the app unhealthy: the livenessProbe fails")
			f.Fetch(ctx, "probed", "", "http://localhost:8080/control?healthy=false", 1)
			switched := time.Now()
			_, restarted, _ := framework.WaitForPodEvent(ctx, pods, "the container to be restarted", func(_ observe.Event, p *corev1.Pod) bool {
				return len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].RestartCount >= 1
			})
			framework.Evidence("liveness", map[string]any{"restartCount": restarted.Status.ContainerStatuses[0].RestartCount,
				"restartedAfterMs": framework.Millis(time.Since(switched))})
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

func hasAddr(ifs map[string][]string, ip string) bool {
	for _, addrs := range ifs {
		for _, a := range addrs {
			if strings.HasPrefix(a, ip+"/") {
				return true
			}
		}
	}
	return false
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func merge(a, b map[string]any) map[string]any {
	for k, v := range b {
		a[k] = v
	}
	return a
}

// parseCgroup reads `kubeproof-testapp cgroup` output into the numbers a
// check compares: the memory limit in bytes and the CPU limit in cores.
func parseCgroup(out string) map[string]any {
	var raw struct {
		Version string            `json:"version"`
		Files   map[string]string `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		return map[string]any{"error": err.Error(), "output": out}
	}
	first := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := raw.Files[k]; ok {
				return v
			}
		}
		return ""
	}
	num := func(s string) float64 {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return -1
		}
		return f
	}
	ev := map[string]any{"version": raw.Version, "files": raw.Files}
	if raw.Version == "v2" {
		ev["memoryLimitBytes"] = num(first("memory.max"))
		if quota, period, ok := strings.Cut(first("cpu.max"), " "); ok {
			ev["cpuLimitCores"] = num(quota) / num(period)
		}
		return ev
	}
	ev["memoryLimitBytes"] = num(first("memory/memory.limit_in_bytes"))
	quota, period := num(first("cpu/cpu.cfs_quota_us", "cpu,cpuacct/cpu.cfs_quota_us")), num(first("cpu/cpu.cfs_period_us", "cpu,cpuacct/cpu.cfs_period_us"))
	if quota > 0 && period > 0 {
		ev["cpuLimitCores"] = quota / period
	} else {
		ev["cpuLimitCores"] = -1
	}
	return ev
}
