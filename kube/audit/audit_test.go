package audit

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func event(stage, verb, user, resource, ns, name string, code int) Event {
	return Event{Stage: stage, Verb: verb, User: UserInfo{Username: user}, RequestURI: "/api/v1/namespaces/" + ns + "/" + resource + "?fieldManager=kubectl-client-side-apply",
		ObjectRef:                &ObjectRef{Resource: resource, Namespace: ns, Name: name},
		ResponseStatus:           &ResponseStatus{Code: code},
		RequestReceivedTimestamp: time.Date(2026, 11, 27, 10, 0, 0, 123456000, time.UTC)}
}

func appendEvents(t *testing.T, path string, events ...Event) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, e := range events {
		line, _ := json.Marshal(e)
		if _, err := f.Write(append(line, '\n')); err != nil {
			t.Fatal(err)
		}
	}
}

// Only what happened after a mark is read, one event per request (its
// ResponseComplete stage; a watch's ResponseStarted), as the matches select.
func TestSince(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	log := Open(path)
	if from, err := log.Mark(); err != nil || from != 0 {
		t.Fatalf("a log not written yet: %d %v", from, err)
	}
	appendEvents(t, path, event("ResponseComplete", "create", "admin", "pods", "old", "before", 201))
	from, err := log.Mark()
	if err != nil || from == 0 {
		t.Fatalf("mark %d %v", from, err)
	}
	appendEvents(t, path,
		event("RequestReceived", "create", "admin", "pods", "ns", "web", 0),
		event("ResponseComplete", "create", "admin", "pods", "ns", "web", 201),
		event("ResponseStarted", "watch", "system:kube-scheduler", "pods", "ns", "", 200),
		event("ResponseComplete", "create", "system:node:n1", "pods", "ns", "web", 403),
		event("ResponseComplete", "patch", "admin", "pods", "other", "web", 200),
	)
	all, err := log.Since(from, nil)
	if err != nil || len(all) != 4 {
		t.Fatalf("events %d %v", len(all), err)
	}
	mine, _ := log.Since(from, All(InNamespace("ns"), Verbs("create"), By("admin")))
	if len(mine) != 1 || mine[0].Code() != 201 {
		t.Errorf("admin's create in ns: %+v", mine)
	}
	if got, _ := log.Since(from, On("pods", "other", "web", "")); len(got) != 1 || got[0].Verb != "patch" {
		t.Errorf("On: %+v", got)
	}
	e := all[0]
	if e.Query("fieldManager") != "kubectl-client-side-apply" || e.Path() != "/api/v1/namespaces/ns/pods" {
		t.Errorf("query %q, path %q", e.Query("fieldManager"), e.Path())
	}
	if got := e.Summary(); got != "create pods ns/web /api/v1/namespaces/ns/pods?fieldManager=kubectl-client-side-apply by admin -> 201 at 10:00:00.123456" {
		t.Errorf("summary %q", got)
	}
}

// A partial last line is not read until the API server finishes it.
func TestPartialLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	line, _ := json.Marshal(event("ResponseComplete", "get", "admin", "pods", "ns", "web", 200))
	if err := os.WriteFile(path, line[:20], 0o644); err != nil {
		t.Fatal(err)
	}
	log := Open(path)
	events, pos, err := log.read(0, nil)
	if err != nil || len(events) != 0 || pos != 0 {
		t.Fatalf("a partial line: %d events, at %d, %v", len(events), pos, err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(append(line[20:], '\n')); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if events, _ := log.Since(0, nil); len(events) != 1 {
		t.Errorf("the finished line: %d events", len(events))
	}
}

// WaitFor returns as soon as the events it waits for are written, and
// otherwise fails after its timeout naming what it awaited and what it saw.
func TestWaitFor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	log := Open(path)
	appendEvents(t, path, event("ResponseComplete", "get", "admin", "pods", "ns", "a", 200))
	written := make(chan struct{})
	go func() {
		defer close(written)
		appendEvents(t, path, event("ResponseComplete", "get", "admin", "pods", "ns", "b", 200))
	}()
	events, err := log.WaitFor(context.Background(), 0, 30*time.Second, "two gets", Verbs("get"), AtLeast(2))
	<-written
	if err != nil || len(events) != 2 {
		t.Fatalf("%d events, %v", len(events), err)
	}
	_, err = log.WaitFor(context.Background(), 0, 50*time.Millisecond, "a delete", Verbs("delete"), AtLeast(1))
	if err == nil || !strings.Contains(err.Error(), "waiting in the audit log for a delete; matching events seen: none") {
		t.Errorf("timeout: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := log.WaitFor(ctx, 0, time.Minute, "a delete", Verbs("delete"), AtLeast(1)); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("cancelled: %v", err)
	}
}
