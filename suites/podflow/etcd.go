package podflow

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/etcd"
)

// The Pod as etcd holds it once created.
type etcdEvidence struct {
	// Exists: etcd has the Pod's key.
	Exists bool `json:"exists"`
	// Key is that key, namespace and name generalized.
	Key string `json:"key"`
	// Encoding is how its value is encoded (e.g. protobuf).
	Encoding string `json:"encoding"`
}

// The Pod's status as etcd holds it once the Pod is Ready.
type etcdFinalEvidence struct {
	// StoredPhase is status.phase in etcd's copy ("" without a key);
	// StoredReady: its Ready condition is True.
	StoredPhase string `json:"storedPhase"`
	StoredReady bool   `json:"storedReady"`
	// NodeNameStored: etcd's copy names the node the Pod is bound to (the
	// one the API server reports).
	NodeNameStored bool `json:"nodeNameStored"`
	// StoredNodeName is the nodeName of etcd's copy.
	StoredNodeName string `json:"storedNodeName"`
}

// Every key etcd holds, and those outside /registry/; of those, the ones
// that hold a Kubernetes object (the API server also keeps bookkeeping of
// its own there, such as compact_rev_key, its last compaction).
type etcdKeysEvidence struct {
	// Total is how many keys etcd holds; OutsideRegistry how many are outside
	// /registry/, ExamplesOutside up to 5 of them.
	Total           int      `json:"total"`
	OutsideRegistry int      `json:"outsideRegistry"`
	ExamplesOutside []string `json:"examplesOutside"`
	// ResourcesOutside is how many of those hold a Kubernetes object;
	// ResourceKeysFound up to 5 of them.
	ResourcesOutside  int      `json:"resourcesOutside"`
	ResourceKeysFound []string `json:"resourceKeysOutside,omitempty"`
}

var (
	etcdPod   = framework.DeclareEvidence[etcdEvidence]("etcd", specCreate)
	etcdKeys  = framework.DeclareEvidence[etcdKeysEvidence]("etcdKeys", specCreate)
	etcdFinal = framework.DeclareEvidence[etcdFinalEvidence]("etcdFinal", specCreate)
)

// recordEtcdEvidence reads the new Pod as etcd holds it (key, encoding) and
// every key etcd holds.
func recordEtcdEvidence(ctx context.Context, f *framework.Framework, db *etcd.Client) {
	ginkgo.GinkgoHelper()
	ginkgo.By("reading the Pod from etcd")
	path := "pods/" + f.Namespace + "/" + podName
	kv, found, err := db.Find(ctx, path)
	framework.ExpectNoError(err, "find %s in etcd", path)
	ev := etcdEvidence{Exists: found}
	if found {
		ev.Key = f.Generalize(kv.Key, map[string]string{podName: "{name}"})
		ev.Encoding = kv.Encoding()
	}
	etcdPod.Record(ev)
	allKeys, _, err := db.Keys(ctx, "")
	framework.ExpectNoError(err, "list etcd keys")
	var outside, resources []string
	for _, k := range allKeys {
		if strings.HasPrefix(k, etcd.DefaultPrefix) {
			continue
		}
		outside = append(outside, k)
		kv, found, err := db.Get(ctx, k)
		framework.ExpectNoError(err, "read %s from etcd", k)
		if found && holdsObject(kv) {
			resources = append(resources, k)
		}
	}
	etcdKeys.Record(etcdKeysEvidence{Total: len(allKeys), OutsideRegistry: len(outside), ExamplesOutside: outside[:min(len(outside), 5)],
		ResourcesOutside: len(resources), ResourceKeysFound: resources[:min(len(resources), 5)]})
}

// holdsObject reports whether a stored value is a Kubernetes object: the
// API server's protobuf envelope, or JSON with an apiVersion and a kind.
func holdsObject(kv etcd.KeyValue) bool {
	if kv.Encoding() == "protobuf" {
		return true
	}
	var typed struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	return json.Unmarshal(kv.Value, &typed) == nil && typed.APIVersion != "" && typed.Kind != ""
}

// recordEtcdFinal reads the status the kubelet reported, decoded from the
// bytes etcd holds.
func recordEtcdFinal(ctx context.Context, f *framework.Framework, db *etcd.Client) {
	ginkgo.GinkgoHelper()
	path := "pods/" + f.Namespace + "/" + podName
	kv, found, err := db.Find(ctx, path)
	framework.ExpectNoError(err, "find %s in etcd", path)
	if !found {
		// etcd holds no key for the Pod (an API server that stores
		// elsewhere): none of its state is in etcd.
		etcdFinal.Record(etcdFinalEvidence{})
		return
	}
	key := kv.Key
	obj, err := etcd.Decode(kv.Value)
	framework.ExpectNoError(err, "decode %s", key)
	p, ok := obj.(*corev1.Pod)
	gomega.Expect(ok).To(gomega.BeTrue(), "%s holds a %T", key, obj)
	served, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, podName, metav1.GetOptions{})
	framework.ExpectNoError(err, "read the Pod from the API server")
	etcdFinal.Record(etcdFinalEvidence{StoredPhase: string(p.Status.Phase), StoredReady: framework.PodReady(p),
		StoredNodeName: p.Spec.NodeName,
		NodeNameStored: p.Spec.NodeName != "" && p.Spec.NodeName == served.Spec.NodeName})
}
