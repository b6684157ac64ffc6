package kubelet

import (
	"context"
	"encoding/json"
	"fmt"
	"path"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
	"github.com/kubeproof/kubeproof/kube/podstate"
)

// The spec of this file.
const specStaticPod = "kubelet-static-pod"

// State that etcd does not hold (seed 004: "모든 클러스터 상태는 etcd에만
// 저장됩니다"): a static Pod is defined by a manifest file in the kubelet's
// staticPodPath on its node. The kubelet runs it from the file and writes a
// mirror Pod to the API server so that it shows there; deleting the mirror
// through the API does not stop the Pod, and a change to the file, made
// without the API server, is what changes it.
var _ = ginkgo.Describe("Kubelet static Pods", func() {
	f := framework.New("kubelet-static")

	ginkgo.It("runs a Pod from a file on its node, whose mirror in the API server it restores, and which the file changes",
		framework.Checks(specStaticPod, framework.Uses(cluster.NodeExec)),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.Images)
			if !f.Has(cluster.NodeExec) {
				staticPod.Unobservable("%s", f.Missing(cluster.NodeExec))
				return
			}
			node := f.WorkerNodes(ctx)[0].Name
			dir, err := staticPodPath(ctx, f, node)
			framework.ExpectNoError(err, "find the kubelet's staticPodPath")
			if dir == "" {
				staticPod.Unobservable("the kubelet on node %s reads no static Pods (its configuration sets no staticPodPath)", node)
				return
			}
			file := path.Join(dir, "kubeproof-"+f.Namespace+".yaml")
			write := func(label string) {
				ginkgo.GinkgoHelper()
				manifest := staticManifest(f.Namespace, label)
				_, err := f.Cluster.RunOnNode(ctx, node, "sh", "-c", `printf '%s' "$1" > "$2.tmp" && mv "$2.tmp" "$2"`, "sh", manifest, file)
				framework.ExpectNoError(err, "write the static Pod's manifest on node %s", node)
			}
			// The file goes first, before the namespace: while it exists the
			// kubelet keeps making its mirror.
			ginkgo.DeferCleanup(func(ctx context.Context) error {
				_, err := f.Cluster.RunOnNode(ctx, node, "rm", "-f", file)
				return err
			})
			pods := f.RecordPods(ctx)
			write("one")
			mirror := "static-" + node
			ev := staticPodEvidence{}
			first := framework.AwaitPod(ctx, pods, mirror, "the static Pod's mirror to show it running", framework.Timeout.PodStart, func(p *corev1.Pod) bool {
				return podstate.AllRunning(p.Status.ContainerStatuses, 1)
			})
			if !first.OK {
				staticPod.Record(ev)
				framework.Unmet("kubelet", "the kubelet ran a static Pod from its manifest file and mirrored it", "not within "+framework.Timeout.PodStart.String()+"; last seen: "+first.LastSeen())
			}
			ev.DefinedInFile = first.Pod.Annotations["kubernetes.io/config.source"] == "file"
			_, ev.Mirrored = first.Pod.Annotations["kubernetes.io/config.mirror"]
			started := startedAt(first.Pod)

			ginkgo.By("delete the mirror Pod through the API server")
			err = f.Client.CoreV1().Pods(f.Namespace).Delete(ctx, mirror, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			framework.ExpectNoError(err, "delete the mirror Pod")
			again := framework.AwaitPod(ctx, pods, mirror, "the kubelet to mirror the static Pod again", framework.Timeout.PodStart, func(p *corev1.Pod) bool {
				return p.UID != first.Pod.UID && p.DeletionTimestamp == nil && podstate.AllRunning(p.Status.ContainerStatuses, 1)
			})
			ev.MirrorRecreated = again.OK
			if again.OK {
				ev.KeptRunning = startedAt(again.Pod).Time.Equal(started.Time) && again.Pod.Status.ContainerStatuses[0].RestartCount == first.Pod.Status.ContainerStatuses[0].RestartCount
			}

			ginkgo.By("change the static Pod's file, not its object")
			write("two")
			changed := framework.AwaitPod(ctx, pods, mirror, "the mirror to carry the label written into the file", framework.Timeout.PodStart, func(p *corev1.Pod) bool {
				return p.Labels["kubeproof.io/static"] == "two"
			})
			ev.FileChangeApplied = changed.OK
			staticPod.Record(ev)
		})
})

// staticPodPath reads the kubelet's staticPodPath from its /configz,
// through the API server's node proxy.
func staticPodPath(ctx context.Context, f *framework.Framework, node string) (string, error) {
	raw, err := f.Client.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes/" + node + "/proxy/configz").DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("read the kubelet's configz on %s: %w", node, err)
	}
	var cz struct {
		KubeletConfig struct {
			StaticPodPath string `json:"staticPodPath"`
		} `json:"kubeletconfig"`
	}
	if err := json.Unmarshal(raw, &cz); err != nil {
		return "", fmt.Errorf("decode the kubelet's configz on %s: %w", node, err)
	}
	return cz.KubeletConfig.StaticPodPath, nil
}

// staticManifest is the static Pod, in namespace, labelled label.
func staticManifest(namespace, label string) string {
	p := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "static", Namespace: namespace, Labels: map[string]string{"kubeproof.io/static": label}},
		Spec:       podsecurity.Restricted(corev1.PodSpec{Containers: []corev1.Container{container("app", 8080)}})}
	data, err := yaml.Marshal(p)
	framework.ExpectNoError(err, "write the static Pod's manifest")
	return string(data)
}

// startedAt is when the Pod's first container started (zero if it does
// not run).
func startedAt(p *corev1.Pod) metav1.Time {
	if len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Running == nil {
		return metav1.Time{}
	}
	return p.Status.ContainerStatuses[0].State.Running.StartedAt
}

// A static Pod: defined by a file on its node, mirrored in the API server.
type staticPodEvidence struct {
	// DefinedInFile: the running Pod's source is a file on the node
	// (annotation kubernetes.io/config.source=file); Mirrored: the object
	// the API server holds is the kubelet's mirror of it
	// (kubernetes.io/config.mirror).
	DefinedInFile bool `json:"definedInFile"`
	Mirrored      bool `json:"mirrored"`
	// MirrorRecreated: after the mirror was deleted through the API server,
	// the kubelet made it again; KeptRunning: the container ran on,
	// neither restarted nor started again.
	MirrorRecreated bool `json:"mirrorRecreated"`
	KeptRunning     bool `json:"keptRunning"`
	// FileChangeApplied: a label written into the file, not sent to the
	// API server, showed on the mirror.
	FileChangeApplied bool `json:"fileChangeApplied"`
}

var staticPod = framework.DeclareEvidence[staticPodEvidence]("staticPod", specStaticPod)
