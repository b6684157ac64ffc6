package apiserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/framework/observe"
)

var _ = ginkgo.Describe("API server storage", func() {
	f := framework.New("storage")

	ginkgo.It("stores what it answers 201 for, under /registry, with resourceVersion = etcd revision",
		framework.Checks("apiserver-storage",
			"004-STORED-BEFORE-201", "004-ETCD-KEY-DEPLOYMENT", "004-RV-REVISION", "003-ETCD-ONLY-APISERVER", "004-ETCD-PROTOBUF"),
		func(ctx ginkgo.SpecContext) {
			f.Require(cluster.EtcdAccess)
			db := f.Etcd()

			ginkgo.By("creating a ConfigMap and reading etcd the moment the 201 arrives")
			res, err := framework.Request(ctx, f.RESTConfig, "POST", "/api/v1/namespaces/"+f.Namespace+"/configmaps",
				map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "stored"}, "data": map[string]string{"k": "v"}})
			framework.ExpectNoError(err, "create a ConfigMap")
			key := "/registry/configmaps/" + f.Namespace + "/stored"
			kv, found, err := db.Get(ctx, key)
			framework.ExpectNoError(err, "read %s from etcd", key)
			var created metav1.ObjectMeta
			var body struct{ Metadata metav1.ObjectMeta }
			_ = json.Unmarshal(res.Body, &body)
			created = body.Metadata
			_, getErr := f.Client.CoreV1().ConfigMaps(f.Namespace).Get(ctx, "stored", metav1.GetOptions{})
			framework.Evidence("created", map[string]any{
				"code": res.Code, "hasUID": created.UID != "", "hasResourceVersion": created.ResourceVersion != "",
				"hasCreationTimestamp": !created.CreationTimestamp.IsZero(), "inEtcdAt201": found, "readableAtOnce": getErr == nil,
			})
			framework.Evidence("resourceVersion", map[string]any{
				"resourceVersion": created.ResourceVersion, "etcdModRevision": strconv.FormatInt(kv.ModRevision, 10),
				"equal": created.ResourceVersion == strconv.FormatInt(kv.ModRevision, 10),
			})

			ginkgo.By("a Deployment's key and encoding")
			var dep appsv1.Deployment
			framework.ExpectNoError(yaml.Unmarshal(fixtures.MustRead("deployment.yaml"), &dep), "read deployment.yaml")
			zero := int32(0)
			dep.Spec.Replicas = &zero
			_, err = f.Client.AppsV1().Deployments(f.Namespace).Create(ctx, &dep, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create a Deployment")
			depKey := "/registry/deployments/" + f.Namespace + "/" + dep.Name
			depKV, found, err := db.Get(ctx, depKey)
			framework.ExpectNoError(err, "read %s from etcd", depKey)
			framework.Evidence("deploymentEtcd", map[string]any{"exists": found, "key": f.Generalize(depKey, map[string]string{dep.Name: "{name}"}), "encoding": depKV.Encoding()})

			ginkgo.By("etcd, asked without a client certificate")
			framework.Evidence("etcdWithoutCertificate", etcdWithoutCertificate(f.Cluster.Etcd))
		})

	ginkgo.It("discovers API groups and paths, a new CRD's among them, and stores custom resources as JSON",
		framework.Checks("apiserver-discovery",
			"004-API-PATHS", "004-DISCOVERY", "004-CRD-SAME-PATTERN", "004-ETCD-PROTOBUF"),
		func(ctx ginkgo.SpecContext) {
			ginkgo.By("the documented paths")
			ns := f.Namespace
			paths := map[string]int{}
			for name, p := range map[string]string{
				"core": "/api/v1/namespaces/" + ns + "/pods", "apps": "/apis/apps/v1/namespaces/" + ns + "/deployments",
				"batch": "/apis/batch/v1/namespaces/" + ns + "/jobs",
			} {
				r, err := framework.Request(ctx, f.RESTConfig, "GET", p, nil)
				framework.ExpectNoError(err, "GET %s", p)
				paths[name] = r.Code
			}
			framework.Evidence("paths", paths)
			framework.Evidence("discovery", discoveryEvidence(ctx, f, ""))

			ginkgo.By("a CustomResourceDefinition of our own, then its discovery and path")
			group := ns + ".kubeproof.io"
			dyn, err := dynamic.NewForConfig(f.RESTConfig)
			framework.ExpectNoError(err, "dynamic client")
			crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
			_, err = dyn.Resource(crdGVR).Create(ctx, checkCRD(group), metav1.CreateOptions{})
			framework.ExpectNoError(err, "create the CRD")
			ginkgo.DeferCleanup(func(ctx context.Context) {
				_ = dyn.Resource(crdGVR).Delete(ctx, "checks."+group, metav1.DeleteOptions{})
			})
			lw := &cache.ListWatch{
				ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
					o.FieldSelector = observe.NameSelector("checks." + group)
					return dyn.Resource(crdGVR).List(ctx, o)
				},
				WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
					o.FieldSelector = observe.NameSelector("checks." + group)
					return dyn.Resource(crdGVR).Watch(ctx, o)
				},
			}
			_, err = observe.Until(ctx, time.Minute, "the CRD to be Established", lw, func(u *unstructured.Unstructured) (bool, error) {
				conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
				for _, c := range conds {
					m, _ := c.(map[string]any)
					if m["type"] == "Established" && m["status"] == "True" {
						return true, nil
					}
				}
				return false, nil
			}, nil)
			framework.ExpectNoError(err, "wait for the CRD")
			crPath := "/apis/" + group + "/v1/namespaces/" + ns + "/checks"
			var listed framework.Response
			err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
				r, err := framework.Request(ctx, f.RESTConfig, "GET", crPath, nil)
				listed = r
				return err == nil && r.Code == 200, nil
			})
			framework.ExpectNoError(err, "wait for %s to be served (last HTTP %d)", crPath, listed.Code)
			created, err := framework.Request(ctx, f.RESTConfig, "POST", crPath, map[string]any{
				"apiVersion": group + "/v1", "kind": "Check", "metadata": map[string]any{"name": "one"}, "spec": map[string]any{"claim": "004-CRD-SAME-PATTERN"}})
			framework.ExpectNoError(err, "create a custom resource")
			crd := discoveryEvidence(ctx, f, group)
			crd["createCode"] = created.Code
			crd["pathPattern"] = f.Generalize(strings.ReplaceAll(crPath, group, "{group}"), nil)
			if f.Cluster.Has(cluster.EtcdAccess) {
				key := "/registry/" + group + "/checks/" + ns + "/one"
				kv, found, err := f.Etcd().Get(ctx, key)
				framework.ExpectNoError(err, "read %s from etcd", key)
				crd["etcdKey"] = f.Generalize(strings.ReplaceAll(key, group, "{group}"), nil)
				crd["etcdExists"] = found
				crd["encoding"] = kv.Encoding()
			}
			framework.Evidence("crd", crd)
		})
})

// discoveryEvidence reads /api and /apis; with a group, whether it is listed.
func discoveryEvidence(ctx context.Context, f *framework.Framework, group string) map[string]any {
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
	ev := map[string]any{"coreVersions": core.Versions, "hasApps": names["apps"], "hasBatch": names["batch"]}
	if group != "" {
		ev["listed"] = names[group]
	}
	return ev
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
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}}
}

// etcdWithoutCertificate connects to etcd trusting its CA but presenting no
// client certificate, and asks for its version over HTTP.
func etcdWithoutCertificate(access *cluster.EtcdClient) map[string]any {
	u, err := url.Parse(access.Endpoints[0])
	if err != nil {
		return map[string]any{"refused": false, "error": err.Error()}
	}
	pool := x509.NewCertPool()
	if ca, err := os.ReadFile(access.CAFile); err == nil {
		pool.AppendCertsFromPEM(ca)
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	conn, err := tls.DialWithDialer(dialer, "tcp", u.Host, &tls.Config{RootCAs: pool, ServerName: u.Hostname()})
	if err != nil {
		return map[string]any{"refused": true, "error": err.Error()}
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(conn, "GET /version HTTP/1.1\r\nHost: %s\r\n\r\n", u.Host)
	buf := make([]byte, 256)
	n, err := conn.Read(buf)
	if err != nil {
		return map[string]any{"refused": true, "error": err.Error()}
	}
	return map[string]any{"refused": false, "answer": string(buf[:n])}
}
