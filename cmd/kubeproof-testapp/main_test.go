package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kubeproof/kubeproof/framework/testapp"
)

func get(t *testing.T, srv *httptest.Server, path string) (int, testapp.Identity) {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	var id testapp.Identity
	if err := json.NewDecoder(resp.Body).Decode(&id); err != nil {
		t.Fatalf("GET %s: decode: %v", path, err)
	}
	return resp.StatusCode, id
}

func TestProbesSwitchAtRuntime(t *testing.T) {
	srv := httptest.NewServer(newHandler(newState(true, true, 0), "10.244.0.9"))
	defer srv.Close()

	if code, id := get(t, srv, "/"); code != 200 || id.App != AppName || id.PodIP != "10.244.0.9" {
		t.Fatalf("identity: HTTP %d %+v", code, id)
	}
	if code, _ := get(t, srv, "/readyz"); code != 200 {
		t.Fatalf("/readyz initially: HTTP %d, want 200", code)
	}
	get(t, srv, "/control?ready=false")
	if code, id := get(t, srv, "/readyz"); code != 503 || id.Ready {
		t.Fatalf("/readyz after ready=false: HTTP %d ready=%t, want 503 false", code, id.Ready)
	}
	if code, _ := get(t, srv, "/healthz"); code != 200 {
		t.Fatalf("/healthz must not follow readiness: HTTP %d", code)
	}
	get(t, srv, "/control?ready=true&healthy=false")
	if code, _ := get(t, srv, "/readyz"); code != 200 {
		t.Fatalf("/readyz after ready=true: HTTP %d", code)
	}
	if code, _ := get(t, srv, "/healthz"); code != 503 {
		t.Fatalf("/healthz after healthy=false: HTTP %d", code)
	}
	resp, err := http.Get(srv.URL + "/control?ready=maybe")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("bad control value: HTTP %d, want 400", resp.StatusCode)
	}
}

func TestStartupProbeFailsUntilStarted(t *testing.T) {
	st := newState(true, true, 1<<62) // never by itself
	srv := httptest.NewServer(newHandler(st, ""))
	defer srv.Close()
	if code, _ := get(t, srv, "/startupz"); code != 503 {
		t.Fatalf("/startupz before start: HTTP %d, want 503", code)
	}
	// Not alive before it has started (a liveness probe that ran now would
	// restart it), but ready is its own switch.
	if code, _ := get(t, srv, "/healthz"); code != 503 {
		t.Fatalf("/healthz before start: HTTP %d, want 503", code)
	}
	if code, _ := get(t, srv, "/readyz"); code != 200 {
		t.Fatalf("/readyz before start: HTTP %d, want 200", code)
	}
	get(t, srv, "/control?started=true")
	if code, _ := get(t, srv, "/startupz"); code != 200 {
		t.Fatalf("/startupz after start: HTTP %d, want 200", code)
	}
	if code, _ := get(t, srv, "/healthz"); code != 200 {
		t.Fatalf("/healthz after start: HTTP %d, want 200", code)
	}
}

// An answer that is not ours must never count as a response: a packet that
// leaves the machine can be answered by anything.
func TestIdentifyRejectsUnknownResponders(t *testing.T) {
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Bad Request", http.StatusBadRequest)
	}))
	defer foreign.Close()
	if who, err := identify(http.DefaultClient, foreign.URL); err == nil {
		t.Fatalf("foreign responder identified as %q", responderName(who))
	}
	ours := httptest.NewServer(newHandler(newState(true, true, 0), "10.0.0.1"))
	defer ours.Close()
	t.Setenv("POD_NAME", "web-1")
	if who, err := identify(http.DefaultClient, ours.URL); err != nil || responderName(who) != "web-1" {
		t.Fatalf("identify ours: %q, %v", responderName(who), err)
	}
}
