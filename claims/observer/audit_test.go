package observer

import (
	"encoding/json"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/kubeproof/kubeproof/kube/audit"
)

// The audit observer's richer view: URI and query with the probe's
// namespace as {namespace}, a refusal's reason and message, the request's
// body fields, and cluster-scoped requests by scope.
func TestAuditRecord(t *testing.T) {
	spec := &Audit{Scope: ScopeBoth, URI: `^/api/v1/(nodes|namespaces/\{namespace\}/pods)`, Body: map[string]string{"node": "{.spec.nodeName}"}}
	if errs := spec.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	env := &Env{Namespace: "kp-1", Start: time.Unix(100, 0)}
	r := &auditRecorder{env: env, filter: *spec}
	r.uriRE = regexp.MustCompile(spec.URI)
	var err error
	if r.body, err = newObjectRecorder(env, spec.Body); err != nil {
		t.Fatal(err)
	}
	pods := audit.Event{Verb: "create", RequestURI: "/api/v1/namespaces/kp-1/pods?fieldManager=kubectl&dryRun=All",
		User: audit.UserInfo{Username: "alice"}, ObjectRef: &audit.ObjectRef{Resource: "pods", Namespace: "kp-1", Name: "web"},
		ResponseStatus: &audit.ResponseStatus{Code: 403, Reason: "Forbidden", Message: `pods "web" is forbidden: User "alice" cannot create resource "pods" in the namespace "kp-1"`},
		RequestObject:  json.RawMessage(`{"spec":{"nodeName":"n1"}}`), RequestReceivedTimestamp: time.Unix(101, 0)}
	nodes := audit.Event{Verb: "list", RequestURI: "/api/v1/nodes?limit=500", ObjectRef: &audit.ObjectRef{Resource: "nodes"}}
	other := audit.Event{Verb: "list", RequestURI: "/api/v1/namespaces/kp-2/pods", ObjectRef: &audit.ObjectRef{Resource: "pods", Namespace: "kp-2"}}
	healthz := audit.Event{Verb: "get", RequestURI: "/healthz"}
	for e, want := range map[*audit.Event]bool{&pods: true, &nodes: true, &other: false, &healthz: false} {
		if got := r.match(*e); got != want {
			t.Errorf("%s: match = %t", e.RequestURI, got)
		}
	}
	got := r.record(pods)
	want := AuditRecord{User: "alice", Verb: "create", Resource: "pods", Name: "web", Namespace: "{namespace}",
		URI: "/api/v1/namespaces/{namespace}/pods?fieldManager=kubectl&dryRun=All", Query: map[string]string{"fieldManager": "kubectl", "dryRun": "All"},
		Code: 403, Reason: "Forbidden", Message: `pods "web" is forbidden: User "alice" cannot create resource "pods" in the namespace "{namespace}"`, At: 1000}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("record = %+v\nwant %+v", got, want)
	}
	if b := r.bodyOf(pods); b["node"] != "n1" {
		t.Errorf("body = %v", b)
	}
	if b := r.bodyOf(nodes); b["node"] != nil || len(b) != 1 {
		t.Errorf("no body = %v", b)
	}
	r.filter.Scope = ""
	if r.match(nodes) {
		t.Error("the default scope took a cluster-scoped request")
	}
}
