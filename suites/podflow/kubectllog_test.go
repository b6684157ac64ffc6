package podflow

import (
	"slices"
	"strings"
	"testing"
)

// kubectl apply -v=8 of a new Pod (kubectl v1.37): a GET that finds
// nothing, then the POST that creates it.
const applyLog = `I1127 21:50:01.100000    4242 round_trippers.go:527] "Request" verb="GET" url="https://127.0.0.1:6443/api/v1/namespaces/kp-1/pods/web" headers=<
	Accept: application/json
 >
I1127 21:50:01.104000    4242 round_trippers.go:632] "Response" status="404 Not Found" headers=<
	Content-Type: application/json
 > milliseconds=4
I1127 21:50:01.105000    4242 request.go:1] "Request Body" body="{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}"
I1127 21:50:01.105500    4242 round_trippers.go:527] "Request" verb="POST" url="https://127.0.0.1:6443/api/v1/namespaces/kp-1/pods?fieldManager=kubectl-client-side-apply&fieldValidation=Strict" headers=<
	Content-Type: application/json
 >
I1127 21:50:01.112000    4242 round_trippers.go:632] "Response" status="201 Created" headers=<
	Content-Type: application/json
 > milliseconds=7
`

func TestReadKubectlLog(t *testing.T) {
	gen := func(p string) string {
		return strings.ReplaceAll(strings.ReplaceAll(p, "kp-1", "{namespace}"), "/pods/"+podName, "/pods/{name}")
	}
	ev, ok := readKubectlLog(applyLog, gen)
	if !ok {
		t.Fatal("no request read")
	}
	if want := (kubectlLogRequest{Method: "POST", Path: "/api/v1/namespaces/{namespace}/pods", Code: 201}); ev.Create != want {
		t.Errorf("create %+v, want %+v", ev.Create, want)
	}
	want := []string{"GET /api/v1/namespaces/{namespace}/pods/{name} -> 404 Not Found", "POST /api/v1/namespaces/{namespace}/pods -> 201 Created"}
	if !slices.Equal(ev.Sent, want) {
		t.Errorf("sent %q, want %q", ev.Sent, want)
	}
	// A refused create is the create, with its code: the readings that
	// read it refute 201.
	ev, _ = readKubectlLog(strings.Replace(applyLog, "201 Created", "403 Forbidden", 1), gen)
	if ev.Create.Code != 403 {
		t.Errorf("refused create read as %+v", ev.Create)
	}
	if _, ok := readKubectlLog("error: unknown flag: --v\n", gen); ok {
		t.Error("a log without requests read as one")
	}
}
