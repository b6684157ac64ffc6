package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision"
)

// apiServer is a stand-in for a cluster's API server, enough for a run to
// reach its preflight: it answers /readyz, /version, the node list, who
// the user is and what the user may do, and writes down every other
// request, so that a test sees that a refused run changed nothing.
type apiServer struct {
	*httptest.Server
	// status, when set, answers every request with it (401: credentials
	// refused).
	status int
	// allowed says what the user may do (verb and resource of a
	// SelfSubjectAccessReview).
	allowed func(verb, resource string) bool

	mu      sync.Mutex
	changes []string
}

func newAPIServer(t *testing.T) *apiServer {
	s := &apiServer{allowed: func(string, string) bool { return true }}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *apiServer) serve(w http.ResponseWriter, r *http.Request) {
	if s.status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(s.status)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":%d}`, s.status)
		return
	}
	reply := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	switch {
	case r.URL.Path == "/readyz":
		fmt.Fprint(w, "ok")
	case r.URL.Path == "/version":
		reply(map[string]string{"major": "1", "minor": "37", "gitVersion": "v1.37.2"})
	case r.URL.Path == "/api/v1/nodes" && r.Method == http.MethodGet:
		reply(map[string]any{"kind": "NodeList", "apiVersion": "v1", "items": []any{}})
	case r.URL.Path == "/apis/authentication.k8s.io/v1/selfsubjectreviews":
		reply(authenticationv1.SelfSubjectReview{Status: authenticationv1.SelfSubjectReviewStatus{UserInfo: authenticationv1.UserInfo{Username: "alice"}}})
	case r.URL.Path == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews":
		// The client sends protobuf or JSON; the scheme reads either.
		body, _ := io.ReadAll(r.Body)
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
		review, ok := obj.(*authorizationv1.SelfSubjectAccessReview)
		if err != nil || !ok {
			http.Error(w, fmt.Sprintf("not a SelfSubjectAccessReview: %v", err), http.StatusBadRequest)
			return
		}
		a := review.Spec.ResourceAttributes
		review.Status.Allowed = s.allowed(a.Verb, a.Resource)
		reply(review)
	default:
		s.mu.Lock()
		s.changes = append(s.changes, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		http.NotFound(w, r)
	}
}

// requests are the requests the server did not expect (a run that went on).
func (s *apiServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string{}, s.changes...)
}

// writeKubeconfig writes a kubeconfig for server (a URL) with a bearer
// token, its context named ctxName.
func writeKubeconfig(t *testing.T, server, ctxName string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: not-a-real-token}
contexts:
- name: %s
  context: {cluster: c, user: u}
current-context: %s
`, server, ctxName, ctxName)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// Bad input about the cluster gets a one-line error, its own exit code,
// and changes nothing: no request that writes reaches the API server, and
// no report directory is made.
func TestBadClusterInputIsOneLineAndChangesNothing(t *testing.T) {
	saved := newProvider
	newProvider = NewProvider
	t.Cleanup(func() { newProvider = saved })
	programs := t.TempDir()
	for _, p := range []string{"kubeproof-testapp", "kubeproof-webhook"} {
		if err := os.WriteFile(filepath.Join(programs, p), []byte("#!/bin/true\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("KUBEPROOF_PROGRAM_DIR", programs)

	healthy := newAPIServer(t)
	refusing := newAPIServer(t)
	refusing.status = http.StatusUnauthorized
	noRBAC := newAPIServer(t)
	noRBAC.allowed = func(verb, resource string) bool { return verb == "get" }

	for _, tc := range []struct {
		name       string
		server     *apiServer
		kubeconfig string
		context    string
		registry   string
		want       exitcode.Code
		says       []string
	}{
		{name: "a context that does not exist", server: healthy, kubeconfig: writeKubeconfig(t, healthy.URL, "real"), context: "nope",
			want: exitcode.Kubeconfig, says: []string{`"nope"`}},
		{name: "an unreachable server", kubeconfig: writeKubeconfig(t, "https://"+closedPort(t), "c"),
			want: exitcode.Unreachable, says: []string{"not reachable"}},
		{name: "credentials refused", server: refusing, kubeconfig: writeKubeconfig(t, refusing.URL, "c"),
			want: exitcode.Credentials, says: []string{"401", "refused the kubeconfig's credentials"}},
		{name: "a user without the RBAC a run needs", server: noRBAC, kubeconfig: writeKubeconfig(t, noRBAC.URL, "c"),
			want: exitcode.Forbidden, says: []string{"(alice)", "create namespaces", "delete namespaces", "nothing was changed"}},
		{name: "a registry that does not answer", server: healthy, kubeconfig: writeKubeconfig(t, healthy.URL, "c"), registry: closedPort(t) + "/kubeproof",
			want: exitcode.Registry, says: []string{"testapp"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reportDir := filepath.Join(t.TempDir(), "report")
			req := provision.Request{Provider: "kubeconfig"}
			req.Existing.Kubeconfig, req.Existing.Context = tc.kubeconfig, tc.context
			req.Shape.ImageRegistry, req.Shape.CacheDir = tc.registry, t.TempDir()
			_, err := Run(context.Background(), Plan{Cluster: req, Filter: NoSpecs, ReportDir: reportDir})
			if got := exitcode.Of(err); got != tc.want {
				t.Fatalf("exit code %d (%v), want %d (%v): %v", got, got, tc.want, tc.want, err)
			}
			msg := err.Error()
			t.Logf("exit %d: %s", exitcode.Of(err), msg)
			if strings.Contains(msg, "\n") {
				t.Errorf("the error is more than one line:\n%s", msg)
			}
			for _, s := range tc.says {
				if !strings.Contains(msg, s) {
					t.Errorf("the error does not say %q: %s", s, msg)
				}
			}
			if tc.server != nil {
				if reqs := tc.server.requests(); len(reqs) > 0 {
					t.Errorf("the refused run sent requests beyond its checks: %v", reqs)
				}
			}
			if _, err := os.Stat(reportDir); err == nil {
				t.Errorf("the refused run made its report directory %s", reportDir)
			}
		})
	}
}
