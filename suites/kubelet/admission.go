package kubelet

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeproof/kubeproof/contract/testapp"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/observe"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
	"github.com/kubeproof/kubeproof/kube/podstate"
)

// The specs of this file.
const (
	specAdmission = "kubelet-admission"
	specIsolation = "kubelet-isolation"
	specSeccomp   = "kubelet-seccomp"
)

var _ = ginkgo.Describe("Kubelet admission and isolation", func() {
	f := framework.New("kubelet-adm")

	ginkgo.It("admits only Pods its node has room for; Pod Security is enforced before a Pod reaches it",
		framework.Checks(specAdmission),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.PodsReady)
			pods := f.RecordPods(ctx)
			node := f.WorkerNodes(ctx)[0]
			// Twice the node's allocatable CPU, on that node by nodeName:
			// the scheduler is out of the way, only the kubelet can say no.
			alloc := node.Status.Allocatable[corev1.ResourceCPU]
			want := alloc.DeepCopy()
			want.Add(alloc)
			big := container("app", 8080)
			big.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: want}}
			createPod(ctx, f, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "too-big"}, Spec: podsecurity.Restricted(corev1.PodSpec{
				NodeName: node.Name, RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{big}})})
			decided := framework.AwaitPod(ctx, pods, "too-big", "the kubelet to run or refuse the Pod", framework.Timeout.PodStart, func(p *corev1.Pod) bool {
				return p.Status.Phase == corev1.PodFailed || podstate.AllRunning(p.Status.ContainerStatuses, 1)
			})
			if !decided.OK {
				framework.Unmet("kubelet", "the kubelet decided on a Pod bound to its node", "neither refused nor running within "+framework.Timeout.PodStart.String()+"; last seen: "+decided.LastSeen())
			}
			p := decided.Pod
			kubeletAdmission.Record(kubeletAdmissionEvidence{Phase: string(p.Status.Phase), Reason: p.Status.Reason, Message: p.Status.Message,
				ContainersStarted: podstate.AllRunning(p.Status.ContainerStatuses, 1), RequestedCPU: want.String(), NodeAllocatable: alloc.String()})

			ginkgo.By("a privileged Pod in a namespace that enforces the restricted standard")
			label := `{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"restricted"}}}`
			_, err := f.Client.CoreV1().Namespaces().Patch(ctx, f.Namespace, types.MergePatchType, []byte(label), metav1.PatchOptions{})
			framework.ExpectNoError(err, "label the namespace to enforce the restricted standard")
			privileged := container("app", 8080)
			yes := true
			privileged.SecurityContext = &corev1.SecurityContext{Privileged: &yes}
			_, err = f.Client.CoreV1().Pods(f.Namespace).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "privileged"}, Spec: corev1.PodSpec{
				NodeName: node.Name, Containers: []corev1.Container{privileged}}}, metav1.CreateOptions{})
			ev := podSecurityEvidence{CreateCode: 201}
			var status apierrors.APIStatus
			switch {
			case err == nil:
				ev.EnforcedBy = kubeletVerdict(ctx, pods, "privileged", &ev)
			case errors.As(err, &status):
				ev.CreateCode, ev.Message, ev.EnforcedBy = int(status.Status().Code), status.Status().Message, "kube-apiserver"
			default:
				framework.ExpectNoError(err, "create the privileged Pod")
			}
			podSecurity.Record(ev)
		})

	ginkgo.It("a Pod's containers share the sandbox's net, ipc and uts namespaces",
		framework.Checks(specIsolation),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.PodsReady)
			pods := f.RecordPods(ctx)
			for _, p := range []*corev1.Pod{
				{ObjectMeta: metav1.ObjectMeta{Name: "pair"}, Spec: podsecurity.Restricted(corev1.PodSpec{Containers: []corev1.Container{container("web", 8080), container("side", 8081)}})},
				{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Spec: podsecurity.Restricted(corev1.PodSpec{Containers: []corev1.Container{container("app", 8080)}})},
			} {
				createPod(ctx, f, p)
			}
			for _, name := range []string{"pair", "other"} {
				framework.RunningPod(ctx, pods, name)
			}
			web, side, other := proc(ctx, f, "pair", "web"), proc(ctx, f, "pair", "side"), proc(ctx, f, "other", "app")
			same := func(a, b testapp.Proc, ns string) bool {
				return a.Namespaces[ns] != "" && a.Namespaces[ns] == b.Namespaces[ns]
			}
			namespaces.Record(namespacesEvidence{
				SharedNet: same(web, side, "net"), SharedIPC: same(web, side, "ipc"), SharedUTS: same(web, side, "uts"),
				OtherPodSeparate: !same(web, other, "net") && !same(web, other, "ipc") && !same(web, other, "uts"),
				HostnameIsPod:    web.Hostname == "pair", Hostname: web.Hostname,
			})
		})

	ginkgo.It("seccomp as the Pod asks: the runtime's default profile filters only when asked for",
		framework.Checks(specSeccomp),
		// The claim is about a Pod that asks for no seccomp profile
		// ("plain"): the baseline standard admits it, restricted does not.
		framework.NeedsPodSecurity(podsecurity.LevelBaseline),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.PodsReady)
			pods := f.RecordPods(ctx)
			// Restricted in all but the seccomp profile, which it leaves
			// to the runtime's default: what the claim is about.
			plain := podsecurity.Restricted(corev1.PodSpec{Containers: []corev1.Container{container("app", 8080)}})
			plain.SecurityContext.SeccompProfile = nil
			runtimeDefault := container("app", 8080)
			runtimeDefault.SecurityContext = &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
			for _, p := range []*corev1.Pod{
				{ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Spec: plain},
				{ObjectMeta: metav1.ObjectMeta{Name: "filtered"}, Spec: podsecurity.Restricted(corev1.PodSpec{Containers: []corev1.Container{runtimeDefault}})},
			} {
				createPod(ctx, f, p)
			}
			for _, name := range []string{"plain", "filtered"} {
				framework.RunningPod(ctx, pods, name)
			}
			seccomp.Record(seccompEvidence{Default: proc(ctx, f, "plain", "app").Seccomp, RuntimeDefault: proc(ctx, f, "filtered", "app").Seccomp})
		})
})

// kubeletVerdict waits for a Pod the API server admitted to run or be
// refused on its node, and says who enforced: the kubelet (it refused), or
// nobody (it ran).
func kubeletVerdict(ctx context.Context, pods *observe.Recorder, name string, ev *podSecurityEvidence) string {
	ginkgo.GinkgoHelper()
	s := framework.AwaitPod(ctx, pods, name, "the kubelet to run or refuse the Pod", framework.Timeout.PodStart, func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodFailed || podstate.AllRunning(p.Status.ContainerStatuses, 1)
	})
	if !s.OK {
		framework.Unmet("kubelet", "the kubelet decided on a Pod bound to its node", "neither refused nor running within "+framework.Timeout.PodStart.String()+"; last seen: "+s.LastSeen())
	}
	if s.Pod.Status.Phase == corev1.PodFailed {
		ev.Message = s.Pod.Status.Reason + ": " + s.Pod.Status.Message
		return "kubelet"
	}
	return "nobody"
}

// proc runs `kubeproof-testapp proc` in a container.
func proc(ctx context.Context, f *framework.Framework, pod, ctr string) testapp.Proc {
	ginkgo.GinkgoHelper()
	res, err := f.Kubectl.Run(ctx, nil, "exec", pod, "--namespace", f.Namespace, "--container", ctr, "--", "/kubeproof-testapp", "proc")
	framework.ExpectNoError(err, "run proc in %s/%s", pod, ctr)
	gomega.Expect(res.ExitCode).To(gomega.Equal(0), res.String())
	var p testapp.Proc
	framework.ExpectNoError(json.Unmarshal([]byte(res.Stdout), &p), "read proc of %s/%s: %s", pod, ctr, res.Stdout)
	return p
}

// Evidence: what the specs above record, under the names the claims files use.

// A Pod bound by its creator to a node without room for it: what the
// kubelet made of it.
type kubeletAdmissionEvidence struct {
	// Phase, Reason and Message are the status of a Pod bound by nodeName
	// asking for twice its node's allocatable CPU, once it failed or ran.
	Phase   string `json:"phase"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// ContainersStarted: its container was running.
	ContainersStarted bool `json:"containersStarted"`
	// RequestedCPU is the CPU it asked for; NodeAllocatable the node's
	// allocatable CPU.
	RequestedCPU    string `json:"requestedCPU"`
	NodeAllocatable string `json:"nodeAllocatable"`
}

// A privileged Pod in a namespace that enforces the restricted Pod
// Security Standard: who stopped it, if anyone.
type podSecurityEvidence struct {
	// EnforcedBy is "kube-apiserver" (the create was refused), "kubelet"
	// (created, but the kubelet refused to run it) or "nobody" (it ran).
	EnforcedBy string `json:"enforcedBy"`
	// CreateCode is the status code of the privileged Pod's create (201 when
	// it was created); Message the refusal's message.
	CreateCode int    `json:"createCode"`
	Message    string `json:"message"`
}

// Two containers of one Pod and a container of another, as the kernel
// reports their namespaces.
type namespacesEvidence struct {
	// SharedNet, SharedIPC and SharedUTS: the Pod's two containers are in the
	// same namespace of that kind.
	SharedNet bool `json:"sharedNet"`
	SharedIPC bool `json:"sharedIPC"`
	SharedUTS bool `json:"sharedUTS"`
	// OtherPodSeparate: the other Pod has a network, IPC and UTS namespace
	// of its own.
	OtherPodSeparate bool `json:"otherPodSeparate"`
	// HostnameIsPod: a container's hostname is the Pod's name; Hostname is
	// that hostname.
	HostnameIsPod bool   `json:"hostnameIsPod"`
	Hostname      string `json:"hostname"`
}

// The seccomp mode of a container by default, and with the runtime's
// default profile asked for.
type seccompEvidence struct {
	// Default and RuntimeDefault are /proc/self/status's Seccomp field:
	// "0" disabled, "2" filtering.
	Default        string `json:"default"`
	RuntimeDefault string `json:"runtimeDefault"`
}

var (
	kubeletAdmission = framework.DeclareEvidence[kubeletAdmissionEvidence]("kubeletAdmission", specAdmission)
	podSecurity      = framework.DeclareEvidence[podSecurityEvidence]("podSecurity", specAdmission)
	namespaces       = framework.DeclareEvidence[namespacesEvidence]("namespaces", specIsolation)
	seccomp          = framework.DeclareEvidence[seccompEvidence]("seccomp", specSeccomp)
)
