package kubectl

import (
	"strings"
	"testing"
)

const verboseLog = `I1122 01:41:21.412064    3240 helper.go:105] "Request Body" body=""
I1122 01:41:21.412144    3240 round_trippers.go:527] "Request" verb="GET" url="https://10.250.0.1:6443/apis/apps/v1/namespaces/kt/deployments/nginx-deployment" headers=<
	Accept: application/json
 >
I1122 01:41:21.416230    3240 round_trippers.go:632] "Response" status="404 Not Found" headers=<
	Content-Type: application/json
I1122 01:41:23.245000    3271 request.go:1] "Request Body" body="{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\"}"
I1122 01:41:23.245481    3271 round_trippers.go:527] "Request" verb="POST" url="https://10.250.0.1:6443/apis/apps/v1/namespaces/kt2/deployments?fieldManager=kubectl-client-side-apply" headers=<
	Accept: application/json
	Content-Type: application/json
	User-Agent: kubectl/v1.36.3 (linux/amd64) kubernetes/$Format
 >
I1122 01:41:23.262784    3271 round_trippers.go:632] "Response" status="201 Created" headers=<
`

func TestExchanges(t *testing.T) {
	ex := Exchanges(verboseLog)
	if len(ex) != 2 {
		t.Fatalf("%d exchanges: %+v", len(ex), ex)
	}
	if ex[0].Method != "GET" || ex[0].Status != "404 Not Found" {
		t.Errorf("first: %+v", ex[0])
	}
	post := ex[1]
	if post.Method != "POST" || post.Status != "201 Created" || post.Headers["Content-Type"] != "application/json" ||
		post.RequestBody != `{"apiVersion":"apps/v1","kind":"Deployment"}` {
		t.Errorf("second: %+v", post)
	}
}

const verbose9 = `I1122 01:47:00.727899    5018 helper.go:246] "Request Body" body=<
	{"apiVersion":"apps/v1","kind":"Deployment"}
 >
I1122 01:47:00.728013    5018 round_trippers.go:527] "Request" curlCommand=<
	curl -v -XPOST  -H "Accept: application/json" -H "Content-Type: application/json" 'https://10.250.0.1:6443/apis/apps/v1/namespaces/kt7/deployments?fieldManager=kubectl-client-side-apply'
 >
I1122 01:47:00.737586    5018 round_trippers.go:632] "Response" verb="POST" url="https://10.250.0.1:6443/apis/apps/v1/namespaces/kt7/deployments" status="201 Created" headers=<
	Audit-Id: d8631c12
 > milliseconds=9
`

func TestExchangesVerbose9(t *testing.T) {
	ex := Exchanges(verbose9)
	if len(ex) != 1 {
		t.Fatalf("%d exchanges: %+v", len(ex), ex)
	}
	e := ex[0]
	if e.Method != "POST" || e.Status != "201 Created" || e.Headers["Content-Type"] != "application/json" ||
		e.RequestBody != `{"apiVersion":"apps/v1","kind":"Deployment"}` ||
		e.URL != "https://10.250.0.1:6443/apis/apps/v1/namespaces/kt7/deployments?fieldManager=kubectl-client-side-apply" {
		t.Errorf("exchange: %+v", e)
	}
}

const verboseOld = `I1122 01:54:34.101  123 request.go:1212] Request Body: {"apiVersion":"apps/v1","kind":"Deployment"}
I1122 01:54:34.102  123 round_trippers.go:466] curl -v -XPOST  -H "Content-Type: application/json" -H "Accept: application/json" 'https://10.250.0.1:6443/apis/apps/v1/namespaces/kt/deployments?fieldManager=kubectl-client-side-apply'
I1122 01:54:34.110  123 round_trippers.go:553] POST https://10.250.0.1:6443/apis/apps/v1/namespaces/kt/deployments?fieldManager=kubectl-client-side-apply 201 Created in 8 milliseconds
`

func TestExchangesOlderKubectl(t *testing.T) {
	ex := Exchanges(verboseOld)
	if len(ex) != 1 || ex[0].Method != "POST" || ex[0].Status != "201 Created" || ex[0].Headers["Content-Type"] != "application/json" ||
		ex[0].RequestBody != `{"apiVersion":"apps/v1","kind":"Deployment"}` {
		t.Fatalf("exchanges: %+v", ex)
	}
}

// kubectl v1.32 at -v=8: the request as "] METHOD URL", its headers, then
// "Response Status: ...".
const verbose8v132 = `I1127 21:23:11.201537   15999 request.go:1] "Request Body" body="{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}"
I1127 21:23:11.201660   15999 round_trippers.go:470] POST https://127.0.0.1:6443/api/v1/namespaces/kp/pods?fieldManager=kubectl-client-side-apply&fieldValidation=Strict
I1127 21:23:11.201666   15999 round_trippers.go:476] Request Headers:
I1127 21:23:11.201678   15999 round_trippers.go:480]     Content-Type: application/json
I1127 21:23:11.201689   15999 round_trippers.go:480]     Authorization: Bearer <masked>
I1127 21:23:11.209907   15999 round_trippers.go:581] Response Status: 201 Created in 8 milliseconds
I1127 21:23:11.209918   15999 round_trippers.go:584] Response Headers:
I1127 21:23:11.209920   15999 round_trippers.go:587]     Audit-Id: 5f1c
I1127 21:23:11.212000   15999 round_trippers.go:470] GET https://127.0.0.1:6443/api?timeout=32s
I1127 21:23:11.212100   15999 round_trippers.go:581] Response Status:  in 0 milliseconds
`

func TestExchangesVerbose8Kubectl132(t *testing.T) {
	ex := Exchanges(verbose8v132)
	if len(ex) != 2 {
		t.Fatalf("%d exchanges: %+v", len(ex), ex)
	}
	post := ex[0]
	if post.Method != "POST" || post.Status != "201 Created" || post.Headers["Content-Type"] != "application/json" ||
		post.Headers["Authorization"] != "Bearer <masked>" || post.Headers["Audit-Id"] != "" ||
		post.RequestBody != `{"apiVersion":"v1","kind":"Pod"}` || !strings.HasSuffix(post.URL, "/pods?fieldManager=kubectl-client-side-apply&fieldValidation=Strict") {
		t.Errorf("the POST: %+v", post)
	}
	if ex[1].Method != "GET" || ex[1].Status != "" {
		t.Errorf("a request that got no answer: %+v", ex[1])
	}
}
