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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/framework"
)

const (
	specConflict  = "apiserver-conflict"
	specWatch     = "apiserver-watch"
	specCompacted = "apiserver-watch-compacted"
)

var _ = ginkgo.Describe("API server concurrency and watches", func() {
	f := framework.New("occ")

	ginkgo.It("optimistic concurrency: of two updates from the same resourceVersion one wins, the other gets 409",
		framework.Checks(specConflict),
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
			ginkgo.By("C, from the same read, updates without a resourceVersion")
			c := b.DeepCopy()
			c.ResourceVersion = ""
			c.Data["by"] = "c"
			third := put(c)
			now, err := cms.Get(ctx, "shared", metav1.GetOptions{})
			framework.ExpectNoError(err, "read the ConfigMap after C's update")
			ev := conflictEvidence{ReadResourceVersion: a.ResourceVersion, FirstCode: first.Code, SecondCode: second.Code,
				Reason: string(second.Status.Reason), Message: second.Status.Message,
				UnconditionalCode: third.Code, UnconditionalOverwrote: now.Data["by"] == "c"}
			var written corev1.ConfigMap
			if first.Code == 200 && json.Unmarshal(first.Body, &written) == nil {
				ev.WrittenResourceVersion = written.ResourceVersion
				before, errBefore := strconv.ParseInt(a.ResourceVersion, 10, 64)
				after, errAfter := strconv.ParseInt(written.ResourceVersion, 10, 64)
				if errBefore == nil && errAfter == nil {
					ev.RVStep = after - before
					ev.RVIncreased = after > before
				}
			}
			conflict.Record(ev)

			ginkgo.By("B reads again and retries")
			fresh, err := cms.Get(ctx, "shared", metav1.GetOptions{})
			framework.ExpectNoError(err, "client B reads again")
			fresh.Data["by"] = "b"
			again := put(fresh)

			ginkgo.By("a merge patch without a resourceVersion, from a stale copy's intent")
			patch, err := framework.RequestWithType(ctx, f.RESTConfig, "PATCH", path, "application/merge-patch+json", `{"data":{"patched":"yes"}}`)
			framework.ExpectNoError(err, "PATCH the ConfigMap")
			retry.Record(retryEvidence{Code: again.Code, PatchWithoutResourceVersion: patch.Code})
		})

	ginkgo.It("watch: resuming from a resourceVersion delivers every later event, in order, as a chunked stream",
		framework.Checks(specWatch),
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

			ginkgo.By("a watch from the resourceVersion before them, for at most " + framework.Timeout.API.String())
			w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: from, FieldSelector: "metadata.name=watched"})
			framework.ExpectNoError(err, "start the watch")
			defer w.Stop()
			received := readModified(ctx, w, len(written), framework.Timeout.API)
			resume.Record(resumeEvidence{
				Written: len(written), Received: len(received), InOrder: strings.Join(received, ",") == strings.Join(written[:len(received)], ","),
				AllDelivered: strings.Join(received, ",") == strings.Join(written, ","),
			})

			ginkgo.By("the same watch over plain HTTP/1.1, and the protocol clients use by default")
			raw := rawWatch(ctx, f.RESTConfig, "/api/v1/namespaces/"+f.Namespace+"/configmaps?watch=true&fieldSelector=metadata.name%3Dwatched&resourceVersion="+from)
			def, err := framework.Request(ctx, f.RESTConfig, "GET", "/version", nil)
			framework.ExpectNoError(err, "GET /version")
			raw.DefaultClientProto = def.Proto
			watchHTTP.Record(raw)
		})

	// Serial: compacting etcd ends every other watch that would resume from
	// an older resourceVersion, other specs' included.
	ginkgo.It("watch: a resourceVersion that etcd compacted away gives 410 Gone", ginkgo.Serial,
		framework.Checks(specCompacted, framework.Requires(cluster.ControlPlaneFlags), framework.Disturbs("compacts etcd"), framework.Requires(cluster.EtcdAccess)),
		func(ctx ginkgo.SpecContext) {
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

			watchFrom := func(cfg *rest.Config) watchHTTPEvidence {
				return rawWatch(ctx, cfg, "/api/v1/namespaces/"+f.Namespace+"/configmaps?watch=true&fieldSelector=metadata.name%3Dcompacted&resourceVersion="+from)
			}
			compacted.Record(watchFrom(direct))
			compactedViaWatchCache.Record(watchFrom(f.RESTConfig))
		})
})

// readModified reads MODIFIED events from w until it has want of them, the
// watch ends, or window passes, and returns their resourceVersions.
func readModified(ctx context.Context, w watch.Interface, want int, window time.Duration) []string {
	var received []string
	timeout := time.After(window)
	for len(received) < want {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return received
			}
			if ev.Type == watch.Modified {
				received = append(received, ev.Object.(*corev1.ConfigMap).ResourceVersion)
			}
		case <-timeout:
			return received
		case <-ctx.Done():
			ginkgo.Fail("interrupted while reading the watch")
		}
	}
	return received
}

// rawWatch opens a watch over HTTP/1.1 and reads its first line: the
// transfer encoding, and the first event's type (and status, for errors).
func rawWatch(ctx context.Context, cfg *rest.Config, path string) watchHTTPEvidence {
	ginkgo.GinkgoHelper()
	tlsCfg, err := rest.TLSConfigFor(cfg)
	framework.ExpectNoError(err, "TLS configuration")
	if tlsCfg == nil {
		tlsCfg = &tls.Config{}
	}
	tlsCfg.NextProtos = []string{"http/1.1"}
	// The kubeconfig's credentials beyond TLS too (a bearer token, a
	// token file, an exec plugin's): without them a user who is not
	// authenticated by a client certificate watches as anonymous (403).
	rt, err := rest.HTTPWrappersForConfig(cfg, &http.Transport{TLSClientConfig: tlsCfg, ForceAttemptHTTP2: false})
	framework.ExpectNoError(err, "the kubeconfig's credentials")
	client := &http.Client{Transport: rt}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", cfg.Host+path, nil)
	framework.ExpectNoError(err, "build the watch request")
	resp, err := client.Do(req)
	framework.ExpectNoError(err, "open the watch")
	defer resp.Body.Close()
	ev := watchHTTPEvidence{Code: resp.StatusCode, Proto: resp.Proto, TransferEncoding: resp.TransferEncoding}
	line, err := bufio.NewReader(resp.Body).ReadBytes('\n')
	if err != nil && len(line) == 0 {
		ev.FirstLineError = err.Error()
		return ev
	}
	var event struct {
		Type   string          `json:"type"`
		Object json.RawMessage `json:"object"`
	}
	if err := json.Unmarshal(line, &event); err != nil || event.Type == "" {
		var status metav1.Status
		_ = json.Unmarshal(line, &status)
		ev.StatusCode, ev.Reason = int(status.Code), string(status.Reason)
		return ev
	}
	ev.FirstEventType, ev.HasObject = event.Type, len(event.Object) > 0
	if event.Type == "ERROR" {
		var status metav1.Status
		_ = json.Unmarshal(event.Object, &status)
		ev.StatusCode, ev.Reason = int(status.Code), string(status.Reason)
	}
	ev.Resumable = resp.StatusCode == 200 && event.Type != "ERROR"
	return ev
}

// Evidence: what the specs above record, under the names the claims files use.

// Two updates from the same resourceVersion.
type conflictEvidence struct {
	// ReadResourceVersion is the resourceVersion clients A and B read.
	ReadResourceVersion string `json:"readResourceVersion"`
	// WrittenResourceVersion is the one A's successful update returned;
	// RVIncreased: it is a higher number than the one A read (etcd's
	// revision, shared by all objects, so the step is 1 only when
	// nothing else was written in between).
	WrittenResourceVersion string `json:"writtenResourceVersion"`
	RVIncreased            bool   `json:"rvIncreased"`
	// RVStep is the written resourceVersion minus the read one.
	RVStep int64 `json:"rvStep"`
	// FirstCode and SecondCode are the status codes of A's update and then
	// B's, both from that read.
	FirstCode  int `json:"firstCode"`
	SecondCode int `json:"secondCode"`
	// Reason and Message are the Status reason and message of B's answer.
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// UnconditionalCode: a third client's update from the same read, sent
	// without a resourceVersion (no precondition); UnconditionalOverwrote:
	// the stored object is then its, A's change gone.
	UnconditionalCode      int  `json:"unconditionalCode"`
	UnconditionalOverwrote bool `json:"unconditionalOverwrote"`
}

// Client B retrying after its conflict, and a patch without a precondition.
type retryEvidence struct {
	// Code is the status code of B's update after reading again.
	Code int `json:"code"`
	// PatchWithoutResourceVersion is the status code of a merge patch without
	// a resourceVersion.
	PatchWithoutResourceVersion int `json:"patchWithoutResourceVersion"`
}

// A watch resumed from an old resourceVersion: what it delivered within
// its window.
// A watch resumed from a resourceVersion five updates back.
type resumeEvidence struct {
	// Written is how many updates were made before the watch (5); Received
	// how many MODIFIED events it delivered within Timeout.API.
	Written  int `json:"written"`
	Received int `json:"received"`
	// InOrder: those events carry the updates' resourceVersions in the order
	// written; AllDelivered: all of them.
	InOrder      bool `json:"inOrder"`
	AllDelivered bool `json:"allDelivered"`
}

// A watch read over plain HTTP/1.1: its framing and first event.
// A watch opened over plain HTTP/1.1, as its first line shows it.
type watchHTTPEvidence struct {
	// Code, Proto and TransferEncoding are the watch response's status code,
	// protocol and transfer encoding over HTTP/1.1.
	Code             int      `json:"code"`
	Proto            string   `json:"proto"`
	TransferEncoding []string `json:"transferEncoding"`
	// FirstEventType is the type of the stream's first event; HasObject: it
	// carries an object.
	FirstEventType string `json:"firstEventType"`
	HasObject      bool   `json:"hasObject"`
	// StatusCode and Reason are the Status code and reason of an ERROR event
	// or a Status answer.
	StatusCode int    `json:"statusCode"`
	Reason     string `json:"reason"`
	// Resumable: the answer was 200 and its first event not an ERROR.
	Resumable bool `json:"resumable"`
	// FirstLineError is why the stream's first line could not be read, if it
	// could not.
	FirstLineError string `json:"firstLineError,omitempty"`
	// DefaultClientProto is the protocol a GET /version with the default
	// client used.
	DefaultClientProto string `json:"defaultClientProto,omitempty"`
}

var (
	conflict               = framework.DeclareEvidence[conflictEvidence]("conflict", specConflict)
	retry                  = framework.DeclareEvidence[retryEvidence]("retry", specConflict)
	resume                 = framework.DeclareEvidence[resumeEvidence]("resume", specWatch)
	watchHTTP              = framework.DeclareEvidence[watchHTTPEvidence]("watchHTTP", specWatch)
	compacted              = framework.DeclareEvidence[watchHTTPEvidence]("compacted", specCompacted)
	compactedViaWatchCache = framework.DeclareEvidence[watchHTTPEvidence]("compactedViaWatchCache", specCompacted)
)
