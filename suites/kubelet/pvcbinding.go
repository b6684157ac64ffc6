package kubelet

import (
	"context"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/access"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
	"github.com/kubeproof/kubeproof/kube/podstate"
)

// The spec of this file.
const specPVCBinding = "kubelet-pvc-binding"

// The kubelet's check that a Pod's claim is bound to a volume before it
// mounts it (seed 004's "PVC → PV 바인딩 확인"): a Pod placed on the node by
// its creator (the scheduler would hold back a Pod whose claim is unbound)
// with a claim no volume matches yet gets no container; once a static
// PersistentVolume is made (no provisioner is needed) and the
// PersistentVolume controller binds the claim, the kubelet mounts it and
// starts the container.
var _ = ginkgo.Describe("Kubelet volumes", func() {
	f := framework.New("kubelet-pvc")

	ginkgo.It("starts no container of a Pod whose claim is not bound, and starts it once the claim is bound",
		framework.Checks(specPVCBinding),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.ServiceAccounts, framework.Images)
			f.NeedsAccess(access.PersistentVolumes)
			class := f.Namespace + "-static" // no StorageClass of that name: static binding only
			claims := f.Client.CoreV1().PersistentVolumeClaims(f.Namespace)
			_, err := claims.Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &class, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}}}},
				metav1.CreateOptions{})
			framework.ExpectNoError(err, "create the claim")
			pods := f.RecordPods(ctx)
			c := container("app", 8080)
			c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data", ReadOnly: true}}
			createPod(ctx, f, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "consumer"}, Spec: podsecurity.Restricted(corev1.PodSpec{
				NodeName:   f.WorkerNodes(ctx)[0].Name,
				Containers: []corev1.Container{c},
				Volumes:    []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}},
			})})

			// An observation window: with the claim unbound the kubelet
			// must start nothing.
			const window = 10 * time.Second
			framework.ObserveFor(ctx, window)
			ev := pvcBindingEvidence{WindowSeconds: window.Seconds()}
			for _, e := range pods.Events() {
				if p := framework.PodOf(e); p != nil && p.Name == "consumer" {
					ev.StartedWhileUnbound = ev.StartedWhileUnbound || anyStarted(p)
					ev.WaitingReason = waitingReason(p)
				}
			}
			claim, err := claims.Get(ctx, "data", metav1.GetOptions{})
			framework.ExpectNoError(err, "read the claim")
			ev.ClaimPhaseWhileWaiting = string(claim.Status.Phase)

			pv := framework.Own(&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: f.Namespace + "-static"},
				Spec: corev1.PersistentVolumeSpec{
					StorageClassName: class, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")},
					AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
					// An existing directory of every node, mounted read-only:
					// the volume leaves nothing behind on the node.
					PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp", Type: ptr.To(corev1.HostPathDirectory)}},
				}})
			_, err = f.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create the PersistentVolume")
			ginkgo.DeferCleanup(func(ctx context.Context) error {
				return f.Client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{})
			})
			started := framework.AwaitPod(ctx, pods, "consumer", "the container of Pod consumer to run once a volume for its claim exists", framework.Timeout.PodStart,
				func(p *corev1.Pod) bool { return podstate.AllRunning(p.Status.ContainerStatuses, 1) })
			ev.StartedOnceBound = started.OK
			claim, err = claims.Get(ctx, "data", metav1.GetOptions{})
			framework.ExpectNoError(err, "read the claim")
			ev.ClaimPhaseAfter, ev.ClaimVolume = string(claim.Status.Phase), claim.Spec.VolumeName
			if !started.OK {
				ev.WaitingReason = waitingReason(started.Pod)
			}
			pvcBinding.Record(ev)
		})
})

// anyStarted reports whether a container of p runs or has run.
func anyStarted(p *corev1.Pod) bool {
	for _, s := range p.Status.ContainerStatuses {
		if s.State.Running != nil || s.State.Terminated != nil || s.LastTerminationState.Terminated != nil {
			return true
		}
	}
	return false
}

// waitingReason is why the Pod's first container waits ("" when it does
// not, or has no status yet).
func waitingReason(p *corev1.Pod) string {
	if p == nil || len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Waiting == nil {
		return ""
	}
	return p.Status.ContainerStatuses[0].State.Waiting.Reason
}

// A Pod on the node whose claim is not bound, then bound.
type pvcBindingEvidence struct {
	// WindowSeconds is how long the Pod was watched with its claim unbound;
	// StartedWhileUnbound: one of its containers started meanwhile.
	WindowSeconds       float64 `json:"windowSeconds"`
	StartedWhileUnbound bool    `json:"startedWhileUnbound"`
	// ClaimPhaseWhileWaiting is the claim's phase at the window's end;
	// WaitingReason the container's waiting reason (last seen).
	ClaimPhaseWhileWaiting string `json:"claimPhaseWhileWaiting"`
	WaitingReason          string `json:"waitingReason"`
	// StartedOnceBound: the container ran within Timeout.PodStart of the
	// volume's creation; ClaimPhaseAfter and ClaimVolume are the claim's
	// phase and volume then.
	StartedOnceBound bool   `json:"startedOnceBound"`
	ClaimPhaseAfter  string `json:"claimPhaseAfter"`
	ClaimVolume      string `json:"claimVolume"`
}

var pvcBinding = framework.DeclareEvidence[pvcBindingEvidence]("pvcBinding", specPVCBinding)
