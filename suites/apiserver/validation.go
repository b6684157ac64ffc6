package apiserver

import (
	"bytes"
	"strings"

	"github.com/onsi/ginkgo/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/identity"
	"github.com/kubeproof/kubeproof/framework/images"
)

// invalid Pods, as JSON bodies.
var (
	podWithoutContainers = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"no-containers"},"spec":{}}`
	podWithWrongType     = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"wrong-type"},"spec":{"containers":"web"}}`
	podWithUnknownField  = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"unknown-field"},"spec":{"containers":[{"name":"web","image":"` + images.TestApp.Ref + `"}],"kubeproofUnknownField":true}}`
)

var _ = ginkgo.Describe("API server validation", func() {
	f := framework.New("validation")

	ginkgo.It("rejects objects that do not fit the schema, and says why",
		framework.Checks("apiserver-validation",
			"003-VALIDATE-REQUIRED", "003-VALIDATE-TYPE", "003-INVALID-400", "003-RBAC-AFTER-VALIDATION",
			"004-SCHEMA-REQUIRED", "004-CHAIN-ORDER", "002-VALIDATION"),
		func(ctx ginkgo.SpecContext) {
			pods := "/api/v1/namespaces/" + f.Namespace + "/pods"
			post := func(query, body string) framework.Response {
				ginkgo.GinkgoHelper()
				r, err := framework.Request(ctx, f.RESTConfig, "POST", pods+query, body)
				framework.ExpectNoError(err, "POST a Pod")
				return r
			}
			stored := func(name string) bool {
				_, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, name, metav1.GetOptions{})
				return err == nil
			}

			ginkgo.By("a Pod without its required containers")
			missing := post("", podWithoutContainers)
			framework.Evidence("missingField", merge(missing.Evidence(), map[string]any{"rejected": missing.Code >= 400, "stored": stored("no-containers")}))

			ginkgo.By("a Pod whose containers field has the wrong type")
			wrong := post("", podWithWrongType)
			framework.Evidence("wrongType", merge(wrong.Evidence(), map[string]any{"rejected": wrong.Code >= 400, "stored": stored("wrong-type")}))

			ginkgo.By("a Pod with an unknown field, under each field validation level")
			levels := map[string]any{}
			for _, level := range []string{"Strict", "Warn", "Ignore"} {
				r := post("?dryRun=All&fieldValidation="+level, podWithUnknownField)
				levels[level] = r.Evidence()
			}
			framework.Evidence("unknownField", levels)

			ginkgo.By("the same through kubectl (its own default is strict)")
			kubectlRuns := map[string]any{}
			for name, run := range map[string][]string{
				"missingField":       {"create", "--dry-run=server", "-f", "-"},
				"unknownFieldStrict": {"create", "--dry-run=server", "-f", "-"},
				"unknownFieldWarn":   {"create", "--dry-run=server", "--validate=warn", "-f", "-"},
			} {
				body := podWithoutContainers
				if strings.HasPrefix(name, "unknownField") {
					body = podWithUnknownField
				}
				res, err := f.Kubectl.Run(ctx, bytes.NewReader([]byte(body)), append(run, "--namespace", f.Namespace)...)
				framework.ExpectNoError(err, "run kubectl %v", run)
				kubectlRuns[name] = map[string]any{"exitCode": res.ExitCode, "stderr": f.Generalize(strings.TrimSpace(res.Stderr), nil)}
			}
			framework.Evidence("kubectl", kubectlRuns)

			ginkgo.By("an invalid Pod from a user who may not create Pods here: which check answers first?")
			cert, key, err := identity.IssueClientCertificate(ctx, f.Client, "kubeproof-nobody", nil)
			framework.ExpectNoError(err, "issue a client certificate")
			r, err := framework.Request(ctx, identity.Certificate(f.RESTConfig, cert, key), "POST", pods, podWithoutContainers)
			framework.ExpectNoError(err, "POST an invalid Pod without permission")
			framework.Evidence("invalidAndForbidden", r.Evidence())
			framework.Evidence("forbidden", map[string]any{"code": r.Code})

			ginkgo.By("a bad token with an invalid Pod")
			r, err = framework.Request(ctx, identity.Bearer(f.RESTConfig, "kubeproof-not-a-token"), "POST", pods, podWithoutContainers)
			framework.ExpectNoError(err, "POST an invalid Pod with a bad token")
			framework.Evidence("invalidAndUnauthenticated", r.Evidence())
		})
})

func merge(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
