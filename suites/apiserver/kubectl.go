package apiserver

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/audit"
	"github.com/kubeproof/kubeproof/framework/kubectl"
)

var _ = ginkgo.Describe("kubectl's requests", func() {
	f := framework.New("kubectl")

	ginkgo.It("kubectl apply -f deployment.yaml: the HTTP requests it really sends (from its own -v=9 log)",
		framework.Checks("apiserver-kubectl-requests", "004-KUBECTL-POST", "004-KUBECTL-YAML-JSON", "001-KUBECTL-HTTP"),
		func(ctx ginkgo.SpecContext) {
			auditLog, from := f.AuditLog()
			res, err := f.Kubectl.Run(ctx, bytes.NewReader(fixtures.MustRead("deployment.yaml")), "apply", "-f", "-", "--namespace", f.Namespace, "-v=9")
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
			framework.Evidence("kubectlRequests", map[string]any{
				"sent": sent,
				"create": map[string]any{
					"method": create.Method, "path": f.Generalize(u.Path, nil), "contentType": create.Headers["Content-Type"],
					"bodyIsJSON": json.Valid([]byte(create.RequestBody)), "status": create.Status,
					"authorization": authorizationKind(create.Headers),
				},
			})

			if auditLog != nil {
				events, err := auditLog.WaitFor(ctx, from, framework.AuditTimeout, "kubectl's Deployment create", audit.On("deployments", f.Namespace, "", ""), func(es []audit.Event) bool {
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
				framework.Evidence("auditedKubectl", map[string]any{"requests": seen})
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
