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
	"k8s.io/client-go/rest"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/access"
	"github.com/kubeproof/kubeproof/kube/audit"
	"github.com/kubeproof/kubeproof/kube/authserver"
	"github.com/kubeproof/kubeproof/kube/identity"
)

// The specs of this package.
const (
	specAuthn         = "apiserver-authn"
	specAnonymousOff  = "apiserver-authn-anonymous-off"
	specAuthnExternal = "apiserver-authn-external"
)

// who asks the API server who cfg's credentials authenticate as.
func who(ctx context.Context, cfg *rest.Config) (authenticationv1.UserInfo, whoEvidence) {
	u, err := identity.WhoAmI(ctx, cfg)
	if err != nil {
		return u, whoEvidence{Error: err.Error()}
	}
	return u, whoEvidence{Username: u.Username, Groups: u.Groups}
}

var _ = ginkgo.Describe("API server authentication", func() {
	f := framework.New("authn")

	ginkgo.It("answers bad, missing and valid credentials of every kind it is configured for",
		framework.Checks(specAuthn, framework.Uses(cluster.AuditLog)),
		func(ctx ginkgo.SpecContext) {
			f.NeedsAccess(access.CSRApproval, access.TokenReviews)
			podsPath := "/api/v1/namespaces/" + f.Namespace + "/pods"
			ask := func(cfg *rest.Config, method, path string, body any) framework.Response {
				ginkgo.GinkgoHelper()
				res, err := framework.Request(ctx, cfg, method, path, body)
				framework.ExpectNoError(err, "send %s %s", method, path)
				return res
			}

			ginkgo.By("a request with an invalid bearer token")
			invalidToken.Record(ask(identity.Bearer(f.RESTConfig, "kubeproof-not-a-token"), "GET", podsPath, nil).Answer())

			ginkgo.By("a request with no credentials at all")
			res := ask(identity.Anonymous(f.RESTConfig), "GET", podsPath, nil)
			noCredentials.Record(noCredentialsEvidence{Code: res.Code, Reason: string(res.Status.Reason), User: userInMessage(res.Status.Message)})

			ginkgo.By("an invalid token on a request that would be forbidden anyway")
			badTokenForbidden.Record(ask(identity.Bearer(f.RESTConfig, "kubeproof-not-a-token"), "POST",
				"/api/v1/namespaces/kube-system/secrets", map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "x"}}).Answer())

			ginkgo.By("an x509 client certificate issued through the CSR API: CN=donghyun, O=dev-team")
			cert, key := f.ClientCertificate(ctx, "donghyun", "dev-team")
			_, x := who(ctx, identity.Certificate(f.RESTConfig, cert, key))
			x509Cert.Record(x)

			ginkgo.By("a ServiceAccount token from the TokenRequest API")
			_, err := f.Client.CoreV1().ServiceAccounts(f.Namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "checker"}}, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create a ServiceAccount")
			token, err := identity.ServiceAccountToken(ctx, f.Client, f.Namespace, "checker")
			framework.ExpectNoError(err, "request a token")
			auditLog, from := f.AuditLog()
			u, sa := who(ctx, identity.Bearer(f.RESTConfig, token))
			sa.Username, sa.Groups = f.Generalize(sa.Username, nil), generalizeAll(f, sa.Groups)
			saToken.Record(saTokenEvidence{JWTParts: len(strings.Split(token, ".")), whoEvidence: sa})

			ginkgo.By("the TokenRequest token checked through the TokenReview API")
			review, err := f.Client.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create a TokenReview")
			tokenReview.Record(tokenReviewEvidence{Authenticated: review.Status.Authenticated, Username: f.Generalize(review.Status.User.Username, nil)})
			if sa.Error != "" {
				userInfo.Unobservable("the ServiceAccount token did not authenticate: %s", sa.Error)
				userInfoSeen.Unobservable("the ServiceAccount token did not authenticate: %s", sa.Error)
				return
			}
			var extra []string
			for k := range u.Extra {
				extra = append(extra, k)
			}
			userInfo.Record(userInfoEvidence{HasUsername: u.Username != "", HasUID: u.UID != "", GroupCount: len(u.Groups), ExtraKeys: extra})

			if auditLog != nil {
				ginkgo.By("the same user, as the audit log (and so authorization) saw it")
				events, err := auditLog.WaitFor(ctx, from, framework.Timeout.Audit, "the SelfSubjectReview request", audit.All(
					func(e audit.Event) bool { return e.ObjectRef != nil && e.ObjectRef.Resource == "selfsubjectreviews" },
					audit.By(u.Username)), audit.AtLeast(1))
				framework.ExpectNoError(err, "read the SelfSubjectReview from the audit log")
				seen := events[0].User
				userInfoSeen.Record(userInfoSeenEvidence{
					SameAsReview: seen.Username == u.Username && seen.UID == u.UID &&
						strings.Join(seen.Groups, ",") == strings.Join(u.Groups, ",") && len(seen.Extra) == len(u.Extra),
				})
			}
		})

	ginkgo.It("refuses a request without credentials when anonymous authentication is off",
		framework.Checks(specAnonymousOff, framework.Requires(cluster.ControlPlaneFlags)),
		func(ctx ginkgo.SpecContext) {
			_, cfg := f.StartAPIServer(ctx, "--anonymous-auth=false")
			res, err := framework.Request(ctx, identity.Anonymous(cfg), "GET", "/api/v1/namespaces/"+f.Namespace+"/pods", nil)
			framework.ExpectNoError(err, "send a request without credentials")
			anonymousOff.Record(res.Answer())
			res, err = framework.Request(ctx, identity.Bearer(cfg, "kubeproof-not-a-token"), "GET", "/api/v1/namespaces/"+f.Namespace+"/pods", nil)
			framework.ExpectNoError(err, "send a request with an invalid token")
			invalidToken.Record(res.Answer())
		})
})

var _ = ginkgo.Describe("API server authentication from outside", func() {
	f := framework.New("authn-ext")

	ginkgo.It("accepts ID tokens of an OIDC issuer (structured AuthenticationConfiguration) and tokens a webhook vouches for",
		framework.Checks(specAuthnExternal, framework.Requires(cluster.ControlPlaneFlags)),
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
			var o whoEvidence
			_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, framework.Timeout.API, true, func(ctx context.Context) (bool, error) {
				_, o = who(ctx, identity.Bearer(cfg, token))
				return o.Error == "", nil
			})
			oidc.Record(o)

			ginkgo.By("an opaque token only the webhook knows")
			_, wt := who(ctx, identity.Bearer(cfg, webhookToken))
			webhookTokenSeen.Record(webhookTokenEvidence{whoEvidence: wt, AskedWebhook: slices.Contains(idp.WebhookAnswers(), "jisoo")})

			ginkgo.By("a token no authenticator accepts")
			res, err := framework.Request(ctx, identity.Bearer(cfg, "kubeproof-nobody-knows-this"), "GET", "/api/v1/namespaces/"+f.Namespace+"/pods", nil)
			framework.ExpectNoError(err, "send an unknown token")
			unknownToken.Record(res.Answer())
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

func generalizeAll(f *framework.Framework, ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = f.Generalize(s, nil)
	}
	return out
}

// Evidence: what the specs above record, under the names the claims files use.

// A request without credentials: the answer and the user it names.
type noCredentialsEvidence struct {
	// Code is the status code of a GET of Pods without credentials.
	Code int `json:"code"`
	// Reason is the answer's Status reason.
	Reason string `json:"reason"`
	// User is the user its message names ("User \"x\" cannot ..."), "" if
	// none.
	User string `json:"user"`
}

// Who a credential authenticated as ("" and the error when it did not).
type whoEvidence struct {
	// Username is the user a SelfSubjectReview with the credential returned,
	// generalized where it holds the namespace.
	Username string `json:"username"`
	// Groups are that user's groups.
	Groups []string `json:"groups"`
	// Error is why the SelfSubjectReview failed, if it did.
	Error string `json:"error,omitempty"`
}

// A ServiceAccount token from the TokenRequest API.
type saTokenEvidence struct {
	// JWTParts is how many dot-separated parts the token has (3 for a JWT).
	JWTParts int `json:"jwtParts"`
	whoEvidence
}

// The parts of the UserInfo authentication produced.
type userInfoEvidence struct {
	// HasUsername and HasUID: the ServiceAccount's UserInfo has a username
	// and a UID.
	HasUsername bool `json:"hasUsername"`
	HasUID      bool `json:"hasUID"`
	// GroupCount is how many groups it has.
	GroupCount int `json:"groupCount"`
	// ExtraKeys are the keys of its extra fields.
	ExtraKeys []string `json:"extraKeys"`
}

// The ServiceAccount token checked through the TokenReview API.
type tokenReviewEvidence struct {
	// Authenticated is the TokenReview's status.authenticated for the
	// ServiceAccount token.
	Authenticated bool `json:"authenticated"`
	// Username is the user it names, generalized.
	Username string `json:"username"`
}

// The ServiceAccount token's user as the audit log recorded it.
type userInfoSeenEvidence struct {
	// SameAsReview: the user the audit log has for the SelfSubjectReview
	// (username, UID, groups, number of extra keys) is the one it returned.
	SameAsReview bool `json:"sameAsReview"`
}

// A token only the harness's webhook authenticator knows.
type webhookTokenEvidence struct {
	whoEvidence
	// AskedWebhook: the harness's webhook authenticator answered a
	// TokenReview for the token.
	AskedWebhook bool `json:"askedWebhook"`
}

var (
	invalidToken      = framework.DeclareEvidence[framework.Answer]("invalidToken", specAuthn, specAnonymousOff)
	noCredentials     = framework.DeclareEvidence[noCredentialsEvidence]("noCredentials", specAuthn)
	badTokenForbidden = framework.DeclareEvidence[framework.Answer]("badTokenForbidden", specAuthn)
	x509Cert          = framework.DeclareEvidence[whoEvidence]("x509", specAuthn)
	saToken           = framework.DeclareEvidence[saTokenEvidence]("saToken", specAuthn)
	userInfo          = framework.DeclareEvidence[userInfoEvidence]("userInfo", specAuthn)
	tokenReview       = framework.DeclareEvidence[tokenReviewEvidence]("tokenReview", specAuthn)
	userInfoSeen      = framework.DeclareEvidence[userInfoSeenEvidence]("userInfoSeen", specAuthn)
	anonymousOff      = framework.DeclareEvidence[framework.Answer]("anonymousOff", specAnonymousOff)
	oidc              = framework.DeclareEvidence[whoEvidence]("oidc", specAuthnExternal)
	webhookTokenSeen  = framework.DeclareEvidence[webhookTokenEvidence]("webhookToken", specAuthnExternal)
	unknownToken      = framework.DeclareEvidence[framework.Answer]("unknownToken", specAuthnExternal)
)
