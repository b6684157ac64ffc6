package probes

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func restClient(t *testing.T, host string) rest.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: host})
	if err != nil {
		t.Fatal(err)
	}
	return cs.Discovery().RESTClient()
}

func TestUnreachable(t *testing.T) {
	answers := map[string]int{"ready": http.StatusOK, "forbidden": http.StatusForbidden, "etcd down": http.StatusInternalServerError}
	for name, code := range answers {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/readyz" {
				t.Errorf("asked %s, want /readyz", r.URL.Path)
			}
			w.WriteHeader(code)
		}))
		if err := unreachable(context.Background(), restClient(t, srv.URL)); err != nil {
			t.Errorf("%s (%d): %v, want an answer", name, code, err)
		}
		srv.Close()
	}
	// A server that is gone: connection refused.
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	if err := unreachable(context.Background(), restClient(t, srv.URL)); err == nil {
		t.Error("a closed server answered, want an error")
	}
	// A probe whose own time ran out still asks.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer ok.Close()
	if err := unreachable(ctx, restClient(t, ok.URL)); err != nil {
		t.Errorf("with the probe's context done: %v, want an answer", err)
	}
}
