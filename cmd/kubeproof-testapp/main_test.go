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

// probeStep sets the app's switches with control (when not empty), then
// expects path to answer want.
type probeStep struct {
	control string
	path    string
	want    int
	why     string
}

func expectProbes(t *testing.T, srv *httptest.Server, steps []probeStep) {
	t.Helper()
	for _, s := range steps {
		if s.control != "" {
			get(t, srv, "/control?"+s.control)
		}
		if code, _ := get(t, srv, s.path); code != s.want {
			t.Fatalf("%s %s: HTTP %d, want %d", s.path, s.why, code, s.want)
		}
	}
}

func TestProbesSwitchAtRuntime(t *testing.T) {
	srv := httptest.NewServer(newHandler(newState(true, true, 0), "10.244.0.9"))
	defer srv.Close()

	if code, id := get(t, srv, "/"); code != 200 || id.App != AppName || id.PodIP != "10.244.0.9" {
		t.Fatalf("identity: HTTP %d %+v", code, id)
	}
	expectProbes(t, srv, []probeStep{
		{"", "/readyz", 200, "initially"},
		{"ready=false", "/readyz", 503, "after ready=false"},
		{"", "/healthz", 200, "after ready=false (liveness must not follow readiness)"},
		{"ready=true&healthy=false", "/readyz", 200, "after ready=true"},
		{"", "/healthz", 503, "after healthy=false"},
	})
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
	// Not alive before it has started (a liveness probe that ran now would
	// restart it), but ready is its own switch.
	expectProbes(t, srv, []probeStep{
		{"", "/startupz", 503, "before start"},
		{"", "/healthz", 503, "before start"},
		{"", "/readyz", 200, "before start"},
		{"started=true", "/startupz", 200, "after start"},
		{"", "/healthz", 200, "after start"},
	})
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
