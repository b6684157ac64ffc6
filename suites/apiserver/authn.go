// Package apiserver observes the API server's handling of a request:
// authentication (401), authorization (403), schema validation, storage in
// etcd (201), discovery and API paths, optimistic concurrency (409) and
// watches, as seeds 002, 003 and 004 describe them.
package apiserver

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/audit"
	"github.com/kubeproof/kubeproof/framework/authserver"
	"github.com/kubeproof/kubeproof/framework/identity"
)

var _ = ginkgo.Describe("API server authentication", func() {
	f := framework.New("authn")

	ginkgo.It("answers bad, missing and valid credentials of every kind it is configured for",
		framework.Checks("apiserver-authn",
			"002-AUTHN", "003-AUTHN-401", "003-AUTHN-METHODS", "004-AUTHN-CHAIN-401", "004-X509-CN-O",
			"004-BEARER-JWT-TOKENREVIEW", "004-USERINFO", "004-AUTHN-BEFORE-AUTHZ"),
		func(ctx ginkgo.SpecContext) {
			podsPath := "/api/v1/namespaces/" + f.Namespace + "/pods"

			ginkgo.By("a request with an invalid bearer token")
			res, err := framework.Request(ctx, identity.Bearer(f.RESTConfig, "kubeproof-not-a-token"), "GET", podsPath, nil)
			framework.ExpectNoError(err, "send a request with an invalid token")
			framework.Evidence("invalidToken", res.Evidence())

			ginkgo.By("a request with no credentials at all")
			res, err = framework.Request(ctx, identity.Anonymous(f.RESTConfig), "GET", podsPath, nil)
			framework.ExpectNoError(err, "send a request without credentials")
			framework.Evidence("noCredentials", map[string]any{"code": res.Code, "reason": string(res.Status.Reason),
				"user": userInMessage(res.Status.Message)})

			ginkgo.By("an invalid token on a request that would be forbidden anyway")
			res, err = framework.Request(ctx, identity.Bearer(f.RESTConfig, "kubeproof-not-a-token"), "POST",
				"/api/v1/namespaces/kube-system/secrets", map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "x"}})
			framework.ExpectNoError(err, "send a forbidden request with an invalid token")
			framework.Evidence("badTokenForbidden", res.Evidence())

			ginkgo.By("an x509 client certificate issued through the CSR API: CN=donghyun, O=dev-team")
			cert, key, err := identity.IssueClientCertificate(ctx, f.Client, "donghyun", []string{"dev-team"})
			framework.ExpectNoError(err, "issue a client certificate")
			who, err := identity.WhoAmI(ctx, identity.Certificate(f.RESTConfig, cert, key))
			framework.ExpectNoError(err, "ask who the certificate authenticates as")
			framework.Evidence("x509", map[string]any{"username": who.Username, "groups": who.Groups})

			ginkgo.By("a ServiceAccount token from the TokenRequest API")
			_, err = f.Client.CoreV1().ServiceAccounts(f.Namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "checker"}}, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create a ServiceAccount")
			token, err := identity.ServiceAccountToken(ctx, f.Client, f.Namespace, "checker")
			framework.ExpectNoError(err, "request a token")
			auditLog, from := f.AuditLog()
			saConfig := identity.Bearer(f.RESTConfig, token)
			who, err = identity.WhoAmI(ctx, saConfig)
			framework.ExpectNoError(err, "ask who the token authenticates as")
			framework.Evidence("saToken", map[string]any{
				"jwtParts": len(strings.Split(token, ".")),
				"username": f.Generalize(who.Username, nil),
				"groups":   generalizeAll(f, who.Groups),
			})
			framework.Evidence("userInfo", userInfoEvidence(who))

			ginkgo.By("the TokenRequest token checked through the TokenReview API")
			review, err := f.Client.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create a TokenReview")
			framework.Evidence("tokenReview", map[string]any{"authenticated": review.Status.Authenticated, "username": f.Generalize(review.Status.User.Username, nil)})

			if auditLog != nil {
				ginkgo.By("the same user, as the audit log (and so authorization) saw it")
				events, err := auditLog.WaitFor(ctx, from, framework.AuditTimeout, "the SelfSubjectReview request", audit.All(
					func(e audit.Event) bool { return e.ObjectRef != nil && e.ObjectRef.Resource == "selfsubjectreviews" },
					audit.By(who.Username)), audit.AtLeast(1))
				framework.ExpectNoError(err, "read the SelfSubjectReview from the audit log")
				seen := events[0].User
				framework.Evidence("userInfoSeen", map[string]any{
					"sameAsReview": seen.Username == who.Username && seen.UID == who.UID &&
						strings.Join(seen.Groups, ",") == strings.Join(who.Groups, ",") && len(seen.Extra) == len(who.Extra),
				})
			}
		})

	ginkgo.It("refuses a request without credentials when anonymous authentication is off",
		framework.Checks("apiserver-authn-anonymous-off", "004-AUTHN-CHAIN-401"),
		func(ctx ginkgo.SpecContext) {
			_, cfg := f.StartAPIServer(ctx, "--anonymous-auth=false")
			res, err := framework.Request(ctx, identity.Anonymous(cfg), "GET", "/api/v1/namespaces/"+f.Namespace+"/pods", nil)
			framework.ExpectNoError(err, "send a request without credentials")
			framework.Evidence("anonymousOff", res.Evidence())
			res, err = framework.Request(ctx, identity.Bearer(cfg, "kubeproof-not-a-token"), "GET", "/api/v1/namespaces/"+f.Namespace+"/pods", nil)
			framework.ExpectNoError(err, "send a request with an invalid token")
			framework.Evidence("invalidToken", res.Evidence())
		})
})

var _ = ginkgo.Describe("API server authentication from outside", func() {
	f := framework.New("authn-ext")

	ginkgo.It("accepts ID tokens of an OIDC issuer (structured AuthenticationConfiguration) and tokens a webhook vouches for",
		framework.Checks("apiserver-authn-external", "003-AUTHN-METHODS", "004-OIDC", "004-WEBHOOK-TOKEN", "004-AUTHN-CHAIN-EXAMPLE"),
		func(ctx ginkgo.SpecContext) {
			idp, err := authserver.Start(map[string]authenticationv1.UserInfo{
				webhookToken: {Username: "jisoo", Groups: []string{"webhook-team"}},
			})
			framework.ExpectNoError(err, "start the harness's identity provider")
			ginkgo.DeferCleanup(idp.Close)
			dir := ginkgo.GinkgoT().TempDir()
			authnConfig := filepath.Join(dir, "authentication.yaml")
			webhookConfig := filepath.Join(dir, "webhook.kubeconfig")
			framework.ExpectNoError(os.WriteFile(authnConfig, idp.AuthenticationConfig("kubeproof"), 0o600), "write the AuthenticationConfiguration")
			framework.ExpectNoError(os.WriteFile(webhookConfig, idp.WebhookKubeconfig(), 0o600), "write the webhook kubeconfig")
			_, cfg := f.StartAPIServer(ctx, "--authentication-config="+authnConfig,
				"--authentication-token-webhook-config-file="+webhookConfig, "--authentication-token-webhook-version=v1")

			ginkgo.By("an ID token for donghyun in dev-team, signed by the issuer")
			token, err := idp.Token("donghyun", []string{"dev-team"}, "kubeproof", 10*time.Minute)
			framework.ExpectNoError(err, "issue an ID token")
			// The JWT authenticator fetches the issuer's keys after the API
			// server starts; until it has them, the token is refused.
			var who authenticationv1.UserInfo
			err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
				who, err = identity.WhoAmI(ctx, identity.Bearer(cfg, token))
				return err == nil, nil
			})
			framework.ExpectNoError(err, "wait for the API server to accept the issuer's token")
			framework.Evidence("oidc", map[string]any{"username": who.Username, "groups": who.Groups})

			ginkgo.By("an opaque token only the webhook knows")
			who, err = identity.WhoAmI(ctx, identity.Bearer(cfg, webhookToken))
			framework.ExpectNoError(err, "authenticate with the webhook token")
			framework.Evidence("webhookToken", map[string]any{"username": who.Username, "groups": who.Groups, "askedWebhook": slices.Contains(idp.WebhookAnswers(), "jisoo")})

			ginkgo.By("a token no authenticator accepts")
			res, err := framework.Request(ctx, identity.Bearer(cfg, "kubeproof-nobody-knows-this"), "GET", "/api/v1/namespaces/"+f.Namespace+"/pods", nil)
			framework.ExpectNoError(err, "send an unknown token")
			framework.Evidence("unknownToken", res.Evidence())
		})
})

// webhookToken is the opaque token the harness's webhook accepts.
const webhookToken = "kubeproof-webhook-token"

// userInMessage extracts the user a 403 message names ("User \"x\" cannot ...").
func userInMessage(msg string) string {
	_, rest, ok := strings.Cut(msg, `User "`)
	if !ok {
		return ""
	}
	user, _, _ := strings.Cut(rest, `"`)
	return user
}

func userInfoEvidence(u authenticationv1.UserInfo) map[string]any {
	var extra []string
	for k := range u.Extra {
		extra = append(extra, k)
	}
	return map[string]any{
		"hasUsername": u.Username != "", "hasUID": u.UID != "", "groupCount": len(u.Groups), "extraKeys": extra,
	}
}

func generalizeAll(f *framework.Framework, ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = f.Generalize(s, nil)
	}
	return out
}
