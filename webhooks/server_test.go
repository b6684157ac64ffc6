package webhooks

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeproof/kubeproof/kube/podsecurity"
	"github.com/kubeproof/kubeproof/kube/podsecurity/podsecuritytest"
)

func review(t *testing.T, srv *httptest.Server, path string, pod corev1.Pod) (*admissionv1.AdmissionResponse, corev1.Pod) {
	t.Helper()
	raw, _ := json.Marshal(pod)
	in := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "u1", Operation: admissionv1.Create, Namespace: "ns",
			Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Object: runtime.RawExtension{Raw: raw}},
	}
	body, _ := json.Marshal(in)
	resp, err := http.Post(srv.URL+path, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s: decode: %v", path, err)
	}
	if out.Response == nil || out.Response.UID != "u1" {
		t.Fatalf("%s: response %+v does not answer the request", path, out.Response)
	}
	result := pod
	if len(out.Response.Patch) > 0 {
		p, err := jsonpatch.DecodePatch(out.Response.Patch)
		if err != nil {
			t.Fatalf("%s: patch: %v", path, err)
		}
		patchedRaw, err := p.Apply(raw)
		if err != nil {
			t.Fatalf("%s: apply patch %s: %v", path, out.Response.Patch, err)
		}
		result = corev1.Pod{}
		if err := json.Unmarshal(patchedRaw, &result); err != nil {
			t.Fatal(err)
		}
	}
	return out.Response, result
}

func plainPod() corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "x"}}}}
}

func TestHandlers(t *testing.T) {
	s := NewServer()
	s.sleep = func(time.Duration) {}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	_, pod := review(t, srv, "/mutate/sidecar", plainPod())
	if len(pod.Spec.Containers) != 2 || pod.Spec.Containers[1].Name != SidecarName || len(pod.Spec.InitContainers) != 1 {
		t.Errorf("sidecar: %+v", pod.Spec)
	}
	_, again := review(t, srv, "/mutate/sidecar", pod)
	if len(again.Spec.Containers) != 2 || len(again.Spec.InitContainers) != 1 {
		t.Error("sidecar injection is not idempotent")
	}
	_, pod = review(t, srv, "/mutate/defaults", plainPod())
	if pod.Labels[DefaultedLabel] != "set" || len(pod.Spec.Containers[0].Resources.Limits) == 0 {
		t.Errorf("defaults: %+v", pod)
	}
	empty := plainPod()
	empty.Spec.Containers = nil
	_, pod = review(t, srv, "/mutate/fill-containers", empty)
	if len(pod.Spec.Containers) != 1 {
		t.Errorf("fill-containers: %+v", pod.Spec)
	}
	labelled := plainPod()
	labelled.Labels = map[string]string{"a": "b"}
	_, pod = review(t, srv, "/mutate/label/example.com~x", labelled)
	if pod.Labels["example.com~x"] != "set" || pod.Labels["a"] != "b" {
		t.Errorf("label: %v", pod.Labels)
	}

	resp, _ := review(t, srv, "/validate/limits/403", plainPod())
	if resp.Allowed || resp.Result.Code != 403 || resp.Result.Message != DenyMessage {
		t.Errorf("limits 403: %+v", resp)
	}
	resp, _ = review(t, srv, "/validate/limits/none", plainPod())
	if resp.Allowed || resp.Result.Code != 0 {
		t.Errorf("limits none: %+v", resp.Result)
	}
	withLimits := plainPod()
	withLimits.Spec.Containers[0].Resources = smallResources()
	if resp, _ := review(t, srv, "/validate/limits/403", withLimits); !resp.Allowed {
		t.Errorf("a Pod with limits was denied: %+v", resp.Result)
	}
	if resp, _ := review(t, srv, "/validate/patch", plainPod()); !resp.Allowed || len(resp.Patch) == 0 {
		t.Errorf("validate/patch: %+v", resp)
	}
	if resp, _ := review(t, srv, "/delay/10/v1", plainPod()); !resp.Allowed {
		t.Error("delay denied")
	}
	if resp, _ := review(t, srv, "/mutate/unknown", plainPod()); resp.Allowed {
		t.Error("an unknown path allowed")
	}

	calls := s.Calls()
	if len(calls) != 11 || calls[0].Webhook != "/mutate/sidecar" || calls[0].Namespace != "ns" || calls[0].Name != "web" {
		t.Fatalf("calls: %d %+v", len(calls), calls[0])
	}
	resp2, err := http.Get(srv.URL + "/calls?namespace=other")
	if err != nil {
		t.Fatal(err)
	}
	var none []Call
	_ = json.NewDecoder(resp2.Body).Decode(&none)
	resp2.Body.Close()
	if len(none) != 0 {
		t.Errorf("namespace filter returned %d calls", len(none))
	}
}

// On a hardened cluster PodSecurity admission judges a Pod after mutation:
// a Pod that passes restricted still does once the webhooks changed it.
func TestMutationsKeepRestrictedPodsRestricted(t *testing.T) {
	s := NewServer()
	s.sleep = func(time.Duration) {}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	restricted := plainPod()
	podsecurity.Restrict(&restricted.Spec)
	empty := restricted
	empty.Spec.Containers = nil
	for path, pod := range map[string]corev1.Pod{
		"/mutate/sidecar": restricted, "/mutate/defaults": restricted, "/mutate/fill-containers": empty,
	} {
		_, got := review(t, srv, path, pod)
		podsecuritytest.Passes(t, "a restricted Pod after "+path, podsecurity.LevelRestricted, got.ObjectMeta, got.Spec)
	}
}
