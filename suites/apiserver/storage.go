package apiserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/access"
	"github.com/kubeproof/kubeproof/kube/observe"
)

const (
	specStorage   = "apiserver-storage"
	specDiscovery = "apiserver-discovery"
)

var _ = ginkgo.Describe("API server storage", func() {
	f := framework.New("storage")

	ginkgo.It("stores what it answers 201 for, under /registry, with resourceVersion = etcd revision",
		framework.Checks(specStorage, framework.Requires(cluster.EtcdAccess)),
		func(ctx ginkgo.SpecContext) {
			db := f.Etcd()

			// Where the API server stores (another --etcd-prefix than
			// /registry/ too), worked out beforehand: the key is read with
			// one request the moment the 201 arrives.
			prefix, err := db.Prefix(ctx, f.Namespace)
			framework.ExpectNoError(err, "find where the API server stores in etcd")
			ginkgo.By("creating a ConfigMap and reading etcd the moment the 201 arrives")
			res, err := framework.Request(ctx, f.RESTConfig, "POST", "/api/v1/namespaces/"+f.Namespace+"/configmaps",
				map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "stored"}, "data": map[string]string{"k": "v"}})
			framework.ExpectNoError(err, "create a ConfigMap")
			key := prefix + "configmaps/" + f.Namespace + "/stored"
			kv, found, err := db.Get(ctx, key)
			framework.ExpectNoError(err, "read %s from etcd", key)
			var body struct{ Metadata metav1.ObjectMeta }
			_ = json.Unmarshal(res.Body, &body)
			meta := body.Metadata
			_, getErr := f.Client.CoreV1().ConfigMaps(f.Namespace).Get(ctx, "stored", metav1.GetOptions{})
			created.Record(createdEvidence{
				Code: res.Code, HasUID: meta.UID != "", HasResourceVersion: meta.ResourceVersion != "",
				HasCreationTimestamp: !meta.CreationTimestamp.IsZero(), InEtcdAt201: found, ReadableAtOnce: getErr == nil,
			})
			rev := strconv.FormatInt(kv.ModRevision, 10)
			resourceVersion.Record(resourceVersionEvidence{ResourceVersion: meta.ResourceVersion, EtcdModRevision: rev, Equal: found && meta.ResourceVersion == rev})

			ginkgo.By("a Deployment's key and encoding")
			var dep appsv1.Deployment
			framework.ExpectNoError(yaml.Unmarshal(framework.Manifest("deployment.yaml"), &dep), "read deployment.yaml")
			zero := int32(0)
			dep.Spec.Replicas = &zero
			_, err = f.Client.AppsV1().Deployments(f.Namespace).Create(ctx, &dep, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create a Deployment")
			depPath := "deployments/" + f.Namespace + "/" + dep.Name
			depKV, found, err := db.Find(ctx, depPath)
			framework.ExpectNoError(err, "find %s in etcd", depPath)
			depEv := etcdObjectEvidence{Exists: found}
			if found {
				depEv.Key, depEv.Encoding = f.Generalize(depKV.Key, map[string]string{dep.Name: "{name}"}), depKV.Encoding()
			}
			deploymentEtcd.Record(depEv)

			ginkgo.By("etcd, asked without a client certificate")
			etcdWithoutCertificate.Record(askEtcdWithoutCertificate(f.Cluster.Etcd))

			ginkgo.By("etcd, asked by a client that is not the API server (kubeproof's, with a certificate of etcd's CA)")
			other := etcdOtherClientEvidence{Answered: true, Outcome: "answered"}
			if _, _, err := db.Get(ctx, prefix+"namespaces/"+f.Namespace); err != nil {
				other = etcdOtherClientEvidence{Outcome: err.Error()}
			}
			etcdOtherClient.Record(other)
		})

	ginkgo.It("discovers API groups and paths, a new CRD's among them, and stores custom resources as JSON",
		framework.Checks(specDiscovery, framework.Uses(cluster.EtcdAccess)),
		func(ctx ginkgo.SpecContext) {
			f.NeedsAccess(access.CRDs)
			ginkgo.By("the documented paths")
			ns := f.Namespace
			code := func(p string) int {
				r, err := framework.Request(ctx, f.RESTConfig, "GET", p, nil)
				framework.ExpectNoError(err, "GET %s", p)
				return r.Code
			}
			paths.Record(pathsEvidence{Core: code("/api/v1/namespaces/" + ns + "/pods"), Apps: code("/apis/apps/v1/namespaces/" + ns + "/deployments"),
				Batch:    code("/apis/batch/v1/namespaces/" + ns + "/jobs"),
				Services: code("/api/v1/namespaces/" + ns + "/services"), ConfigMaps: code("/api/v1/namespaces/" + ns + "/configmaps"),
				StatefulSets:      code("/apis/apps/v1/namespaces/" + ns + "/statefulsets"),
				DeploymentsInCore: code("/api/v1/namespaces/" + ns + "/deployments")})
			d, _ := discover(ctx, f, "")
			discovery.Record(d)

			ginkgo.By("a CustomResourceDefinition of our own, then its discovery and path")
			group := ns + ".kubeproof.io"
			dyn, err := dynamic.NewForConfig(f.RESTConfig)
			framework.ExpectNoError(err, "dynamic client")
			crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
			_, err = dyn.Resource(crdGVR).Create(ctx, framework.Own(checkCRD(group)), metav1.CreateOptions{})
			framework.ExpectNoError(err, "create the CRD")
			ginkgo.DeferCleanup(func(ctx context.Context) {
				_ = dyn.Resource(crdGVR).Delete(ctx, "checks."+group, metav1.DeleteOptions{})
			})
			crds := dyn.Resource(crdGVR)
			lw := observe.Named(crds.List, crds.Watch, "checks."+group)
			_, err = observe.Until(ctx, framework.Timeout.API, "the CRD to be Established", lw, func(u *unstructured.Unstructured) (bool, error) {
				conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
				for _, c := range conds {
					m, _ := c.(map[string]any)
					if m["type"] == "Established" && m["status"] == "True" {
						return true, nil
					}
				}
				return false, nil
			}, nil)
			if err != nil {
				framework.Unmet("kube-apiserver", "the CustomResourceDefinition was established", err.Error())
			}
			crPath := "/apis/" + group + "/v1/namespaces/" + ns + "/checks"
			var listed framework.Response
			err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, framework.Timeout.API, true, func(ctx context.Context) (bool, error) {
				r, err := framework.Request(ctx, f.RESTConfig, "GET", crPath, nil)
				listed = r
				return err == nil && r.Code == 200, nil
			})
			if err != nil {
				framework.Unmet("kube-apiserver", "the custom resource was served at "+f.Generalize(crPath, nil), fmt.Sprintf("last answer HTTP %d %s", listed.Code, listed.Status.Message))
			}
			cr, err := framework.Request(ctx, f.RESTConfig, "POST", crPath, map[string]any{
				"apiVersion": group + "/v1", "kind": "Check", "metadata": map[string]any{"name": "one"}, "spec": map[string]any{"claim": "004-CRD-SAME-PATTERN"}})
			framework.ExpectNoError(err, "create a custom resource")
			_, listedGroup := discover(ctx, f, group)
			ev := crdEvidence{Listed: listedGroup, CreateCode: cr.Code, PathPattern: f.Generalize(strings.ReplaceAll(crPath, group, "{group}"), nil)}
			if f.Has(cluster.EtcdAccess) {
				path := group + "/checks/" + ns + "/one"
				kv, found, err := f.Etcd().Find(ctx, path)
				framework.ExpectNoError(err, "find %s in etcd", path)
				ev.EtcdExists = found
				if found {
					ev.EtcdKey, ev.Encoding = f.Generalize(strings.ReplaceAll(kv.Key, group, "{group}"), nil), kv.Encoding()
				}
			}
			crd.Record(ev)

			ginkgo.By("the OpenAPI v3 schemas the API server serves, and what its validation refuses")
			tooBig, err := framework.Request(ctx, f.RESTConfig, "POST", crPath+"?dryRun=All", map[string]any{
				"apiVersion": group + "/v1", "kind": "Check", "metadata": map[string]any{"name": "two"}, "spec": map[string]any{"size": 11}})
			framework.ExpectNoError(err, "create a custom resource against its schema")
			schemaEv := schemaValidation(ctx, f)
			schemaEv.CustomRuleRefused = tooBig.Code == 422 && strings.Contains(tooBig.Status.Message, "spec.size")
			schemaEv.CustomRuleAnswer = tooBig.Answer()
			openAPI.Record(schemaEv)
		})
})

// discover reads /api and /apis and says whether group is listed.
func discover(ctx context.Context, f *framework.Framework, group string) (discoveryEvidence, bool) {
	ginkgo.GinkgoHelper()
	var core metav1.APIVersions
	var groups metav1.APIGroupList
	for path, into := range map[string]any{"/api": &core, "/apis": &groups} {
		r, err := framework.Request(ctx, f.RESTConfig, "GET", path, nil)
		framework.ExpectNoError(err, "GET %s", path)
		gomega.Expect(r.Code).To(gomega.Equal(200), "GET %s: %s", path, r.Body)
		framework.ExpectNoError(json.Unmarshal(r.Body, into), "decode %s", path)
	}
	names := map[string]bool{}
	for _, g := range groups.Groups {
		names[g.Name] = true
	}
	return discoveryEvidence{CoreVersions: core.Versions, HasApps: names["apps"], HasBatch: names["batch"]}, names[group]
}

func checkCRD(group string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "checks." + group},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced",
			"names": map[string]any{"plural": "checks", "singular": "check", "kind": "Check", "listKind": "CheckList"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				// One rule of our own (spec.size at most 10), to see the
				// schema itself refuse an object.
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true,
					"properties": map[string]any{"spec": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true,
						"properties": map[string]any{"size": map[string]any{"type": "integer", "maximum": int64(10)}}}}}},
			}},
		},
	}}
}

// askEtcdWithoutCertificate connects to etcd trusting its CA but presenting
// no client certificate, and asks for its version over HTTP. Only a TLS
// alert from etcd about the certificate counts as refused; anything else
// that goes wrong on our side fails the spec (it says nothing about etcd).
func askEtcdWithoutCertificate(access *cluster.EtcdClient) etcdWithoutCertificateEvidence {
	ginkgo.GinkgoHelper()
	u, err := url.Parse(access.Endpoints[0])
	framework.ExpectNoError(err, "parse the etcd endpoint")
	ca, err := os.ReadFile(access.CAFile)
	framework.ExpectNoError(err, "read etcd's CA")
	pool := x509.NewCertPool()
	gomega.Expect(pool.AppendCertsFromPEM(ca)).To(gomega.BeTrue(), "etcd's CA file holds no certificate")
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	alert := func(err error) (etcdWithoutCertificateEvidence, bool) {
		var ae tls.AlertError
		if errors.As(err, &ae) || strings.Contains(err.Error(), "remote error: tls:") {
			return etcdWithoutCertificateEvidence{Refused: true, Outcome: "tls alert: " + err.Error()}, true
		}
		return etcdWithoutCertificateEvidence{}, false
	}
	conn, err := tls.DialWithDialer(dialer, "tcp", u.Host, &tls.Config{RootCAs: pool, ServerName: u.Hostname()})
	if err != nil {
		if ev, ok := alert(err); ok {
			return ev
		}
		framework.ExpectNoError(err, "connect to etcd at %s", u.Host)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(conn, "GET /version HTTP/1.1\r\nHost: %s\r\n\r\n", u.Host)
	buf := make([]byte, 256)
	n, err := conn.Read(buf)
	if err != nil {
		if ev, ok := alert(err); ok {
			return ev
		}
		framework.ExpectNoError(err, "read etcd's answer")
	}
	return etcdWithoutCertificateEvidence{Refused: false, Outcome: "answered: " + string(buf[:n])}
}

// Evidence: what the specs above record, under the names the claims files use.

// A ConfigMap, read from etcd the moment its 201 arrived.
type createdEvidence struct {
	// Code is the HTTP status code of the ConfigMap's POST.
	Code int `json:"code"`
	// HasUID, HasResourceVersion and HasCreationTimestamp: the response's
	// metadata has each set.
	HasUID               bool `json:"hasUID"`
	HasResourceVersion   bool `json:"hasResourceVersion"`
	HasCreationTimestamp bool `json:"hasCreationTimestamp"`
	// InEtcdAt201: etcd had the ConfigMap's key when read right after the
	// response arrived.
	InEtcdAt201 bool `json:"inEtcdAt201"`
	// ReadableAtOnce: a GET right after that succeeded.
	ReadableAtOnce bool `json:"readableAtOnce"`
}

// The created ConfigMap's resourceVersion beside its etcd revision.
type resourceVersionEvidence struct {
	// ResourceVersion is the created ConfigMap's resourceVersion, as the
	// response states it.
	ResourceVersion string `json:"resourceVersion"`
	// EtcdModRevision is the mod revision of its key in etcd.
	EtcdModRevision string `json:"etcdModRevision"`
	// Equal: the key was found and the two are the same.
	Equal bool `json:"equal"`
}

// An object as etcd holds it.
type etcdObjectEvidence struct {
	// Exists: etcd has the object's key.
	Exists bool `json:"exists"`
	// Key is that key, the namespace and name generalized ({namespace},
	// {name}).
	Key string `json:"key"`
	// Encoding is how the value is encoded (as kube/etcd tells it from
	// its first bytes).
	Encoding string `json:"encoding"`
}

// etcd asked by kubeproof's own client, with a client certificate of
// etcd's CA: a client that is not kube-apiserver.
type etcdOtherClientEvidence struct {
	// Answered: etcd answered the read of the namespace's key.
	Answered bool `json:"answered"`
	// Outcome is "answered", or the client's error.
	Outcome string `json:"outcome"`
}

// What etcd does with a client that presents no certificate.
type etcdWithoutCertificateEvidence struct {
	// Refused: etcd ended the connection with a TLS alert about the
	// missing certificate.
	Refused bool `json:"refused"`
	// Outcome says what happened: "tls alert: ...", "answered: ...".
	Outcome string `json:"outcome"`
}

// The status codes of GETs of the documented resource paths.
type pathsEvidence struct {
	// Core, Apps and Batch are the status codes of a GET of Pods under
	// /api/v1, Deployments under /apis/apps/v1 and Jobs under /apis/batch/v1
	// (the spec's namespace).
	Core  int `json:"core"`
	Apps  int `json:"apps"`
	Batch int `json:"batch"`
	// Services and ConfigMaps under /api/v1, StatefulSets under
	// /apis/apps/v1; DeploymentsInCore: Deployments asked for under
	// /api/v1, where a resource of a group is not.
	Services          int `json:"services"`
	ConfigMaps        int `json:"configMaps"`
	StatefulSets      int `json:"statefulSets"`
	DeploymentsInCore int `json:"deploymentsInCore"`
}

// What /api and /apis list.
type discoveryEvidence struct {
	// CoreVersions are the versions /api lists.
	CoreVersions []string `json:"coreVersions"`
	// HasApps and HasBatch: /apis lists the group.
	HasApps  bool `json:"hasApps"`
	HasBatch bool `json:"hasBatch"`
}

// A CustomResourceDefinition of our own, its discovery, path and storage.
type crdEvidence struct {
	// Listed: /apis lists the CRD's group once the CRD is established.
	Listed bool `json:"listed"`
	// CreateCode is the status code of the custom resource's POST.
	CreateCode int `json:"createCode"`
	// PathPattern is the custom resources' path, the group and namespace
	// generalized.
	PathPattern string `json:"pathPattern"`
	// EtcdKey is the custom resource's key in etcd, generalized; absent
	// without etcd access or key.
	EtcdKey string `json:"etcdKey,omitempty"`
	// EtcdExists: etcd has that key (false without etcd access).
	EtcdExists bool `json:"etcdExists"`
	// Encoding is how its value is encoded; absent without etcd access or
	// key.
	Encoding string `json:"encoding,omitempty"`
}

var (
	created                = framework.DeclareEvidence[createdEvidence]("created", specStorage)
	resourceVersion        = framework.DeclareEvidence[resourceVersionEvidence]("resourceVersion", specStorage)
	deploymentEtcd         = framework.DeclareEvidence[etcdObjectEvidence]("deploymentEtcd", specStorage)
	etcdWithoutCertificate = framework.DeclareEvidence[etcdWithoutCertificateEvidence]("etcdWithoutCertificate", specStorage)
	etcdOtherClient        = framework.DeclareEvidence[etcdOtherClientEvidence]("etcdOtherClient", specStorage)
	paths                  = framework.DeclareEvidence[pathsEvidence]("paths", specDiscovery)
	discovery              = framework.DeclareEvidence[discoveryEvidence]("discovery", specDiscovery)
	crd                    = framework.DeclareEvidence[crdEvidence]("crd", specDiscovery)
	openAPI                = framework.DeclareEvidence[openAPIEvidence]("openAPI", specDiscovery)
)
