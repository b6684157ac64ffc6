package apiserver

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/audit"
	"github.com/kubeproof/kubeproof/kube/identity"
	"github.com/kubeproof/kubeproof/kube/kubectl"
)

const specKubectl = "apiserver-kubectl-requests"

var _ = ginkgo.Describe("kubectl's requests", func() {
	f := framework.New("kubectl")

	ginkgo.It("kubectl apply -f deployment.yaml: the HTTP requests it really sends (from its own -v=9 log)",
		framework.Checks(specKubectl, framework.Uses(cluster.AuditLog)),
		func(ctx ginkgo.SpecContext) {
			auditLog, from := f.AuditLog()
			res, err := f.Kubectl.Run(ctx, bytes.NewReader(framework.Manifest("deployment.yaml")), "apply", "-f", "-", "--namespace", f.Namespace, "-v=9")
			framework.ExpectNoError(err, "run kubectl apply -v=9")
			gomega.Expect(res.ExitCode).To(gomega.Equal(0), res.String())

			var sent []string
			var create *kubectl.Exchange
			for _, ex := range kubectl.Exchanges(res.Stderr) {
				u, err := url.Parse(ex.URL)
				if err != nil || strings.HasPrefix(u.Path, "/openapi") || strings.HasPrefix(u.Path, "/api?") {
					continue
				}
				path := f.Generalize(u.Path, map[string]string{"nginx-deployment": "{name}"})
				sent = append(sent, ex.Method+" "+path+" -> "+ex.Status)
				if ex.Method == "POST" && strings.HasSuffix(u.Path, "/deployments") {
					create = &ex
				}
			}
			gomega.Expect(create).NotTo(gomega.BeNil(), "kubectl sent no POST for the Deployment; it sent %v", sent)
			u, _ := url.Parse(create.URL)
			kubectlRequests.Record(kubectlRequestsEvidence{Sent: sent, Create: kubectlCreate{
				Method: create.Method, Scheme: u.Scheme, Path: f.Generalize(u.Path, nil), ContentType: create.Headers["Content-Type"],
				BodyIsJSON: json.Valid([]byte(create.RequestBody)), Status: create.Status, Authorization: authorizationKind(create.Headers),
			}})

			ginkgo.By("kubectl given a token: the header it sends")
			if token, err := identity.ServiceAccountToken(ctx, f.Client, f.Namespace, "default"); err != nil {
				withToken.Unobservable("no token to give kubectl: %v", err)
			} else {
				res, err := f.Kubectl.Run(ctx, nil, "get", "configmaps", "--namespace", f.Namespace, "--token", token, "-v=9")
				framework.ExpectNoError(err, "run kubectl get --token -v=9")
				exchanges := kubectl.Exchanges(res.Stderr)
				gomega.Expect(exchanges).NotTo(gomega.BeEmpty(), "kubectl --token -v=9 logged no request: %s", res.String())
				withToken.Record(kubectlWithTokenEvidence{Authorization: authorizationKind(exchanges[len(exchanges)-1].Headers)})
			}

			if auditLog != nil {
				events, err := auditLog.WaitFor(ctx, from, framework.Timeout.Audit, "kubectl's Deployment create", audit.On("deployments", f.Namespace, "", ""), func(es []audit.Event) bool {
					for _, e := range es {
						if e.Verb == "create" {
							return true
						}
					}
					return false
				})
				framework.ExpectNoError(err, "read kubectl's requests from the audit log")
				var seen []string
				for _, e := range events {
					if strings.HasPrefix(e.UserAgent, "kubectl/") {
						seen = append(seen, e.Verb+" -> "+strconv.Itoa(e.Code()))
					}
				}
				auditedKubectl.Record(auditedKubectlEvidence{Requests: seen})
			}
		})
})

// authorizationKind says how kubectl authenticated, without the secret.
func authorizationKind(h map[string]string) string {
	if v, ok := h["Authorization"]; ok {
		kind, _, _ := strings.Cut(v, " ")
		return kind
	}
	return "client certificate (no Authorization header)"
}

// Evidence: what the specs above record, under the names the claims files use.

// kubectl's create request for the Deployment, from its own -v=9 log.
type kubectlCreate struct {
	// Method, Scheme and Path are the request's method, URL scheme and path
	// (generalized).
	Method string `json:"method"`
	Scheme string `json:"scheme"`
	Path   string `json:"path"`
	// ContentType is its Content-Type header; BodyIsJSON: its body is valid
	// JSON.
	ContentType string `json:"contentType"`
	BodyIsJSON  bool   `json:"bodyIsJSON"`
	// Status is the response status kubectl logged.
	Status string `json:"status"`
	// Authorization is the Authorization header's scheme (e.g. Bearer), or
	// that there was none (a client certificate).
	Authorization string `json:"authorization"`
}

// The requests kubectl apply -v=9 logged.
type kubectlRequestsEvidence struct {
	// Sent are the requests kubectl apply logged, "METHOD path -> status",
	// discovery and OpenAPI aside.
	Sent []string `json:"sent"`
	// Create is its POST of the Deployment.
	Create kubectlCreate `json:"create"`
}

// How kubectl authenticates a request when it is given a token (here a
// ServiceAccount token with --token): the header it sends, from -v=9.
type kubectlWithTokenEvidence struct {
	// Authorization is the Authorization header's scheme kubectl get --token
	// sent (e.g. Bearer).
	Authorization string `json:"authorization"`
}

// kubectl's requests as the audit log recorded them.
type auditedKubectlEvidence struct {
	// Requests are kubectl's requests on Deployments in the audit log, "verb
	// -> code".
	Requests []string `json:"requests"`
}

var (
	kubectlRequests = framework.DeclareEvidence[kubectlRequestsEvidence]("kubectlRequests", specKubectl)
	auditedKubectl  = framework.DeclareEvidence[auditedKubectlEvidence]("auditedKubectl", specKubectl)
	withToken       = framework.DeclareEvidence[kubectlWithTokenEvidence]("kubectlWithToken", specKubectl)
)
