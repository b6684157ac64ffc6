// Package webhooks is kubeproof's own admission webhook server: the handlers
// the admission suite installs to prove the order, the concurrency and the
// effect of admission, and a recorder of every call it receives.
//
// Handlers are chosen by URL path, so one server serves every webhook a
// configuration names:
//
//	/mutate/sidecar              add a sidecar container and an init container
//	/mutate/defaults             add a label, and requests and limits where missing
//	/mutate/fill-containers      add a container to a Pod that has none
//	/mutate/label/<key>          add the label <key>=set (once)
//	/validate/limits/<code>      deny a Pod whose containers lack limits; <code> is
//	                             the HTTP code to deny with, or "none"
//	/validate/patch              allow, but return a patch anyway
//	/allow/<name>                allow
//	/delay/<ms>/<name>           wait <ms> milliseconds, then allow
//
// Every call is recorded (webhook path, operation, the object as received,
// arrival and departure times); GET /calls returns the records.
package webhooks

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Call is one admission request the server received.
type Call struct {
	Webhook        string            `json:"webhook"`
	UID            string            `json:"uid"`
	Operation      string            `json:"operation"`
	Kind           string            `json:"kind"`
	Namespace      string            `json:"namespace"`
	Name           string            `json:"name"`
	DryRun         bool              `json:"dryRun"`
	Labels         map[string]string `json:"labels,omitempty"`
	Containers     []string          `json:"containers,omitempty"`
	InitContainers []string          `json:"initContainers,omitempty"`
	Allowed        bool              `json:"allowed"`
	Patched        bool              `json:"patched"`
	Arrived        time.Time         `json:"arrived"`
	Departed       time.Time         `json:"departed"`
}

// Server handles admission reviews and keeps the calls.
type Server struct {
	mu    sync.Mutex
	calls []Call
	// sleep waits for the delay handler (replaced in tests).
	sleep func(time.Duration)
}

// NewServer returns a server with no calls yet.
func NewServer() *Server { return &Server{sleep: time.Sleep} }

// Calls returns the calls so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Handler serves the webhooks, /calls and the probes.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/calls", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.filter(r.URL.Query().Get("namespace")))
	})
	for _, prefix := range []string{"/mutate/", "/validate/", "/allow/", "/delay/"} {
		mux.HandleFunc(prefix, s.admit)
	}
	return mux
}

func (s *Server) filter(namespace string) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if namespace == "" || c.Namespace == namespace {
			out = append(out, c)
		}
	}
	return out
}

// admit decodes the AdmissionReview, runs the handler its path names,
// records the call and answers.
func (s *Server) admit(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	req := review.Request
	var pod corev1.Pod
	_ = json.Unmarshal(req.Object.Raw, &pod)

	resp := s.decide(r.URL.Path, &pod)
	resp.UID = req.UID

	call := Call{
		Webhook: r.URL.Path, UID: string(req.UID), Operation: string(req.Operation), Kind: req.Kind.Kind,
		Namespace: req.Namespace, Name: pod.Name, DryRun: req.DryRun != nil && *req.DryRun, Labels: pod.Labels,
		Containers: names(pod.Spec.Containers), InitContainers: names(pod.Spec.InitContainers),
		Allowed: resp.Allowed, Patched: len(resp.Patch) > 0, Arrived: arrived, Departed: time.Now(),
	}
	if call.Name == "" {
		call.Name = pod.GenerateName
	}
	s.mu.Lock()
	s.calls = append(s.calls, call)
	s.mu.Unlock()

	review.Response = resp
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}

// decide runs the handler a path names.
func (s *Server) decide(path string, pod *corev1.Pod) *admissionv1.AdmissionResponse {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	allow := &admissionv1.AdmissionResponse{Allowed: true}
	switch {
	case len(parts) == 2 && parts[0] == "mutate" && parts[1] == "sidecar":
		return patched(injectSidecar(pod))
	case len(parts) == 2 && parts[0] == "mutate" && parts[1] == "defaults":
		return patched(applyDefaults(pod))
	case len(parts) == 2 && parts[0] == "mutate" && parts[1] == "fill-containers":
		return patched(fillContainers(pod))
	case len(parts) == 3 && parts[0] == "mutate" && parts[1] == "label":
		return patched(addLabel(pod, parts[2]))
	case len(parts) == 3 && parts[0] == "validate" && parts[1] == "limits":
		return requireLimits(pod, parts[2])
	case len(parts) == 2 && parts[0] == "validate" && parts[1] == "patch":
		// A validating webhook may not change the object; this one tries.
		return patched(addLabel(pod, "kubeproof.io/validating-patch"))
	case len(parts) == 2 && parts[0] == "allow":
		return allow
	case len(parts) == 3 && parts[0] == "delay":
		if ms, err := strconv.Atoi(parts[1]); err == nil {
			s.sleep(time.Duration(ms) * time.Millisecond)
		}
		return allow
	}
	return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{
		Code: http.StatusBadRequest, Message: "kubeproof-webhook: unknown webhook path " + path}}
}

func names(cs []corev1.Container) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}
