package scheduler

import (
	"context"
	"slices"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/access"
	"github.com/kubeproof/kubeproof/kube/audit"
	"github.com/kubeproof/kubeproof/kube/observe"
)

// The spec of this file.
const specVolumeBinding = "scheduler-volume-binding"

// Volume binding as part of scheduling (seed 004's Reserve row): a claim
// whose StorageClass waits for its first consumer stays unbound until a Pod
// uses it; then the scheduler, having chosen a node, binds it to a volume
// that node can reach (the VolumeBinding plugin assumes the binding at
// Reserve and writes it at PreBind), before it binds the Pod. The volume is
// a static PersistentVolume: no provisioner is needed. Two simulated nodes,
// the volume reachable from one of them only.
var _ = ginkgo.Describe("Scheduler volume binding", func() {
	f := framework.New("sched-vol")

	ginkgo.It("binds a claim that waits for its first consumer to a volume of the node it chose, before it binds the Pod",
		framework.Checks(specVolumeBinding, framework.Disturbs("adds simulated Nodes"), framework.Uses(cluster.AuditLog)),
		func(ctx ginkgo.SpecContext) {
			f.NeedsAccess(access.PersistentVolumes, access.StorageClasses)
			log, from := f.AuditLog()
			reachable := f.SimulatedNode(ctx, "reach", framework.SimNode{CPU: "4", Memory: "8Gi"})
			f.SimulatedNode(ctx, "other", framework.SimNode{CPU: "4", Memory: "8Gi"})

			class := framework.Own(&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: f.Namespace + "-wait"},
				Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)})
			_, err := f.Client.StorageV1().StorageClasses().Create(ctx, class, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create the StorageClass")
			ginkgo.DeferCleanup(func(ctx context.Context) error {
				return f.Client.StorageV1().StorageClasses().Delete(ctx, class.Name, metav1.DeleteOptions{})
			})
			pv := framework.Own(&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: f.Namespace + "-static"},
				Spec: corev1.PersistentVolumeSpec{
					StorageClassName: class.Name, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")},
					AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
					PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp", Type: ptr.To(corev1.HostPathDirectory)}},
					NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
						MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{reachable.Name}}},
					}}}},
				}})
			_, err = f.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create the PersistentVolume")
			ginkgo.DeferCleanup(func(ctx context.Context) error {
				return f.Client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{})
			})
			events := f.RecordEvents(ctx)
			claims := f.Client.CoreV1().PersistentVolumeClaims(f.Namespace)
			_, err = claims.Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &class.Name, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}}}},
				metav1.CreateOptions{})
			framework.ExpectNoError(err, "create the claim")

			ev := volumeBindingEvidence{}
			// The claim's state before any Pod uses it: the PersistentVolume
			// controller leaves a claim of a WaitForFirstConsumer class
			// alone, and says so in an event.
			_, waited := framework.Await(ctx, events, "the claim's WaitForFirstConsumer event", framework.Timeout.API, func(es []observe.Event) bool {
				return slices.ContainsFunc(es, func(e observe.Event) bool {
					ev, ok := e.Object.(*corev1.Event)
					return ok && ev.Reason == "WaitForFirstConsumer" && ev.InvolvedObject.Name == "data"
				})
			})
			ev.WaitedForConsumer = waited
			c, err := claims.Get(ctx, "data", metav1.GetOptions{})
			framework.ExpectNoError(err, "read the claim")
			ev.PhaseBeforePod = string(c.Status.Phase)

			pods := f.RecordPods(ctx)
			p := newPod("consumer", "100m", "64Mi")
			f.TolerateSimulated(&p.Spec)
			p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data", ReadOnly: true}}
			createPod(ctx, f, p)
			node := bindings(ctx, pods, p.Name)[p.Name]
			ev.PodBound, ev.PodOnVolumeNode = node != "", node == reachable.Name
			if node == "" {
				volumeBinding.Record(ev)
				framework.Unmet("kube-scheduler", "the scheduler bound the Pod that uses the claim", "not bound within "+framework.Timeout.Bind.String())
			}
			c, err = claims.Get(ctx, "data", metav1.GetOptions{})
			framework.ExpectNoError(err, "read the claim")
			ev.ClaimVolume = c.Spec.VolumeName
			ev.BoundToStaticVolume = c.Spec.VolumeName == pv.Name
			if log == nil {
				volumeBinding.Record(ev)
				volumeBindingWriters.Unobservable("%s", f.Missing(cluster.AuditLog))
				return
			}
			volumeBinding.Record(ev)
			recordVolumeBindingWriters(ctx, f, log, from, pv.Name, p.Name)
		})
})

// recordVolumeBindingWriters reads from the audit log who wrote the
// volume's claimRef and when, against the Pod's binding.
func recordVolumeBindingWriters(ctx context.Context, f *framework.Framework, log *audit.Log, from audit.Offset, pv, pod string) {
	ginkgo.GinkgoHelper()
	bind, err := log.WaitFor(ctx, from, framework.Timeout.Audit, "the Pod's binding", audit.All(audit.On("pods", f.Namespace, pod, "binding")), audit.AtLeast(1))
	framework.ExpectNoError(err, "read the Pod's binding from the audit log")
	writes, err := log.Since(from, audit.All(audit.On("persistentvolumes", "", pv, ""), audit.Verbs("update", "patch")))
	framework.ExpectNoError(err, "read the volume's updates from the audit log")
	ev := volumeBindingWritersEvidence{PodBindingBy: bind[0].User.Username}
	for _, w := range writes {
		if w.Code() >= 300 {
			continue
		}
		ev.VolumeWriters = append(ev.VolumeWriters, w.User.Username)
		if w.User.Username == "system:kube-scheduler" && !ev.SchedulerBoundVolume {
			ev.SchedulerBoundVolume = true
			ev.VolumeBeforePodBinding = w.RequestReceivedTimestamp.Before(bind[0].RequestReceivedTimestamp)
		}
	}
	slices.Sort(ev.VolumeWriters)
	ev.VolumeWriters = slices.Compact(ev.VolumeWriters)
	volumeBindingWriters.Record(ev)
}

// A claim of a WaitForFirstConsumer class, and a Pod that uses it.
type volumeBindingEvidence struct {
	// WaitedForConsumer: the PersistentVolume controller said, in a
	// WaitForFirstConsumer event, that it leaves the claim to its first
	// consumer; PhaseBeforePod is the claim's phase before any Pod used it.
	WaitedForConsumer bool   `json:"waitedForConsumer"`
	PhaseBeforePod    string `json:"phaseBeforePod"`
	// PodBound: the scheduler bound the Pod that uses the claim, within
	// Timeout.Bind; PodOnVolumeNode: to the one node (of two) the volume's
	// node affinity allows.
	PodBound        bool `json:"podBound"`
	PodOnVolumeNode bool `json:"podOnVolumeNode"`
	// ClaimVolume is the volume the claim is bound to once the Pod is;
	// BoundToStaticVolume: the static PersistentVolume made for it.
	ClaimVolume         string `json:"claimVolume"`
	BoundToStaticVolume bool   `json:"boundToStaticVolume"`
}

// Who bound the volume, from the audit log.
type volumeBindingWritersEvidence struct {
	// VolumeWriters are the users whose update of the PersistentVolume
	// succeeded; SchedulerBoundVolume: the scheduler's among them.
	VolumeWriters        []string `json:"volumeWriters"`
	SchedulerBoundVolume bool     `json:"schedulerBoundVolume"`
	// VolumeBeforePodBinding: the scheduler's update of the volume arrived
	// before its binding of the Pod.
	VolumeBeforePodBinding bool `json:"volumeBeforePodBinding"`
	// PodBindingBy is the user that bound the Pod.
	PodBindingBy string `json:"podBindingBy"`
}

var (
	volumeBinding        = framework.DeclareEvidence[volumeBindingEvidence]("volumeBinding", specVolumeBinding)
	volumeBindingWriters = framework.DeclareEvidence[volumeBindingWritersEvidence]("volumeBindingWriters", specVolumeBinding)
)
