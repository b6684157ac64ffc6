package apiserver

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/cluster"
)

var _ = ginkgo.Describe("API server concurrency and watches", func() {
	f := framework.New("occ")

	ginkgo.It("optimistic concurrency: of two updates from the same resourceVersion one wins, the other gets 409",
		framework.Checks("apiserver-conflict", "004-OCC-409", "004-OCC-RETRY"),
		func(ctx ginkgo.SpecContext) {
			cms := f.Client.CoreV1().ConfigMaps(f.Namespace)
			_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "shared"}, Data: map[string]string{"by": "nobody"}}, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create a ConfigMap")
			a, err := cms.Get(ctx, "shared", metav1.GetOptions{})
			framework.ExpectNoError(err, "client A reads")
			b := a.DeepCopy() // client B read the same resourceVersion
			path := "/api/v1/namespaces/" + f.Namespace + "/configmaps/shared"
			put := func(cm *corev1.ConfigMap) framework.Response {
				ginkgo.GinkgoHelper()
				r, err := framework.Request(ctx, f.RESTConfig, "PUT", path, cm)
				framework.ExpectNoError(err, "PUT the ConfigMap")
				return r
			}

			ginkgo.By("A updates first, then B from the same resourceVersion")
			a.Data["by"] = "a"
			first := put(a)
			b.Data["by"] = "b"
			second := put(b)
			framework.Evidence("conflict", map[string]any{
				"readResourceVersion": a.ResourceVersion, "firstCode": first.Code, "secondCode": second.Code,
				"reason": string(second.Status.Reason), "message": second.Status.Message,
			})

			ginkgo.By("B reads again and retries")
			fresh, err := cms.Get(ctx, "shared", metav1.GetOptions{})
			framework.ExpectNoError(err, "client B reads again")
			fresh.Data["by"] = "b"
			retry := put(fresh)

			ginkgo.By("a merge patch without a resourceVersion, from a stale copy's intent")
			patch, err := framework.RequestWithType(ctx, f.RESTConfig, "PATCH", path, "application/merge-patch+json", `{"data":{"patched":"yes"}}`)
			framework.ExpectNoError(err, "PATCH the ConfigMap")
			framework.Evidence("retry", map[string]any{"code": retry.Code, "patchWithoutResourceVersion": patch.Code})
		})

	ginkgo.It("watch: resuming from a resourceVersion delivers every later event, in order, as a chunked stream",
		framework.Checks("apiserver-watch", "004-WATCH-RESUME", "004-WATCH-STREAM", "004-WATCH-CHUNKED"),
		func(ctx ginkgo.SpecContext) {
			cms := f.Client.CoreV1().ConfigMaps(f.Namespace)
			cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "watched"}, Data: map[string]string{"n": "0"}}, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create a ConfigMap")
			from := cm.ResourceVersion

			ginkgo.By("five updates while nobody watches")
			var written []string
			for i := 1; i <= 5; i++ {
				cm.Data["n"] = strconv.Itoa(i)
				cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
				framework.ExpectNoError(err, "update %d", i)
				written = append(written, cm.ResourceVersion)
			}

			ginkgo.By("a watch from the resourceVersion before them")
			w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: from, FieldSelector: "metadata.name=watched"})
			framework.ExpectNoError(err, "start the watch")
			defer w.Stop()
			var received []string
			timeout := time.After(30 * time.Second)
			for len(received) < len(written) {
				select {
				case ev, ok := <-w.ResultChan():
					gomega.Expect(ok).To(gomega.BeTrue(), "the watch ended after %d of %d events", len(received), len(written))
					if ev.Type == watch.Modified {
						received = append(received, ev.Object.(*corev1.ConfigMap).ResourceVersion)
					}
				case <-timeout:
					ginkgo.Fail(fmt.Sprintf("timed out waiting for %d events from resourceVersion %s; received %v", len(written), from, received))
				}
			}
			framework.Evidence("resume", map[string]any{
				"written": len(written), "received": len(received), "inOrder": strings.Join(received, ",") == strings.Join(written, ","),
				"allDelivered": len(received) == len(written),
			})

			ginkgo.By("the same watch over plain HTTP/1.1, and the protocol clients use by default")
			raw := rawWatch(ctx, f.RESTConfig, "/api/v1/namespaces/"+f.Namespace+"/configmaps?watch=true&fieldSelector=metadata.name%3Dwatched&resourceVersion="+from)
			def, err := framework.Request(ctx, f.RESTConfig, "GET", "/version", nil)
			framework.ExpectNoError(err, "GET /version")
			raw["defaultClientProto"] = def.Proto
			framework.Evidence("watchHTTP", raw)
		})

	ginkgo.It("watch: a resourceVersion that etcd compacted away gives 410 Gone",
		framework.Checks("apiserver-watch-compacted", "004-WATCH-RESUME"),
		func(ctx ginkgo.SpecContext) {
			f.Require(cluster.EtcdAccess)
			// The API server's watch cache answers recent watches from
			// memory; an API server without it shows what etcd does.
			_, direct := f.StartAPIServer(ctx, "--watch-cache=false")
			cms := f.Client.CoreV1().ConfigMaps(f.Namespace)
			cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "compacted"}, Data: map[string]string{"n": "0"}}, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create a ConfigMap")
			from := cm.ResourceVersion
			for i := 1; i <= 3; i++ {
				cm.Data["n"] = strconv.Itoa(i)
				cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
				framework.ExpectNoError(err, "update %d", i)
			}
			db := f.Etcd()
			_, rev, err := db.Keys(ctx, "/registry/configmaps/"+f.Namespace+"/")
			framework.ExpectNoError(err, "read etcd's revision")
			ginkgo.By(fmt.Sprintf("compacting etcd at revision %d", rev))
			framework.ExpectNoError(db.Compact(ctx, rev), "compact etcd")

			watchFrom := func(cfg *rest.Config) map[string]any {
				return rawWatch(ctx, cfg, "/api/v1/namespaces/"+f.Namespace+"/configmaps?watch=true&fieldSelector=metadata.name%3Dcompacted&resourceVersion="+from)
			}
			framework.Evidence("compacted", watchFrom(direct))
			framework.Evidence("compactedViaWatchCache", watchFrom(f.RESTConfig))
		})
})

// rawWatch opens a watch over HTTP/1.1 and reads its first line: the
// transfer encoding, and the first event's type (and status, for errors).
func rawWatch(ctx context.Context, cfg *rest.Config, path string) map[string]any {
	ginkgo.GinkgoHelper()
	tlsCfg, err := rest.TLSConfigFor(cfg)
	framework.ExpectNoError(err, "TLS configuration")
	if tlsCfg == nil {
		tlsCfg = &tls.Config{}
	}
	tlsCfg.NextProtos = []string{"http/1.1"}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg, ForceAttemptHTTP2: false}}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", cfg.Host+path, nil)
	framework.ExpectNoError(err, "build the watch request")
	resp, err := client.Do(req)
	framework.ExpectNoError(err, "open the watch")
	defer resp.Body.Close()
	ev := map[string]any{"code": resp.StatusCode, "proto": resp.Proto, "transferEncoding": resp.TransferEncoding}
	line, err := bufio.NewReader(resp.Body).ReadBytes('\n')
	if err != nil && len(line) == 0 {
		ev["firstLineError"] = err.Error()
		return ev
	}
	var event struct {
		Type   string          `json:"type"`
		Object json.RawMessage `json:"object"`
	}
	if err := json.Unmarshal(line, &event); err != nil {
		var status metav1.Status
		_ = json.Unmarshal(line, &status)
		ev["statusCode"], ev["reason"], ev["resumable"] = int(status.Code), string(status.Reason), false
		return ev
	}
	ev["firstEventType"], ev["hasObject"] = event.Type, len(event.Object) > 0
	if event.Type == "ERROR" {
		var status metav1.Status
		_ = json.Unmarshal(event.Object, &status)
		ev["statusCode"], ev["reason"] = int(status.Code), string(status.Reason)
	}
	ev["resumable"] = resp.StatusCode == 200 && event.Type != "ERROR"
	return ev
}
