package apiserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"k8s.io/client-go/rest"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/access"
	"github.com/kubeproof/kubeproof/kube/authserver"
)

// The spec of this file.
const specAuthorizers = "apiserver-authorizers"

// The users of the spec: one an ABAC policy lets read ConfigMaps, one the
// webhook authorizer does, one nothing allows.
const (
	abacReader    = "kubeproof-abac-reader"
	webhookReader = "kubeproof-webhook-reader"
	nobody        = "kubeproof-nobody"
)

var _ = ginkgo.Describe("API server authorizers besides RBAC", func() {
	f := framework.New("authorizers")

	ginkgo.It("ABAC and a webhook authorizer, chained before RBAC, each allow what they were given, in their order",
		framework.Checks(specAuthorizers, framework.Requires(cluster.ControlPlaneFlags)),
		func(ctx ginkgo.SpecContext) {
			f.NeedsAccess(access.CSRApproval)
			authz, err := authserver.Start(nil)
			framework.ExpectNoError(err, "start the harness's authorization webhook")
			ginkgo.DeferCleanup(authz.Close)
			authz.Allow(authserver.Grant{User: webhookReader, Verb: "list", Resource: "configmaps"})
			dir := ginkgo.GinkgoT().TempDir()
			policy := filepath.Join(dir, "abac-policy.jsonl")
			webhookConfig := filepath.Join(dir, "authorizer.kubeconfig")
			framework.ExpectNoError(os.WriteFile(policy, abacPolicy(abacReader, f.Namespace), 0o600), "write the ABAC policy")
			framework.ExpectNoError(os.WriteFile(webhookConfig, authz.AuthorizerKubeconfig(), 0o600), "write the authorizer's kubeconfig")
			// The clients first: their certificates are issued through the
			// cluster's own API server.
			users := map[string]*rest.Config{}
			for _, u := range []string{abacReader, webhookReader, nobody} {
				users[u] = f.ClientIdentity(ctx, u)
			}
			srv, _ := f.StartAPIServer(ctx, "--authorization-mode=Node,ABAC,Webhook,RBAC",
				"--authorization-policy-file="+policy,
				"--authorization-webhook-config-file="+webhookConfig, "--authorization-webhook-version=v1",
				// Every answer fresh: a cached one would hide the chain.
				"--authorization-webhook-cache-authorized-ttl=0s", "--authorization-webhook-cache-unauthorized-ttl=0s")

			list := "/api/v1/namespaces/" + f.Namespace + "/configmaps"
			ask := func(user, method string, body any) (onChain, onCluster framework.Answer, webhookAsked bool) {
				ginkgo.GinkgoHelper()
				before := len(authz.AuthorizerAsked())
				onExtra := rest.CopyConfig(users[user])
				onExtra.Host = srv.URL
				r, err := framework.Request(ctx, onExtra, method, list, body)
				framework.ExpectNoError(err, "%s %s as %s on the API server with the chain", method, list, user)
				onChain = r.Answer()
				webhookAsked = slices.ContainsFunc(authz.AuthorizerAsked()[before:], func(a string) bool { return hasUser(a, user) })
				r, err = framework.Request(ctx, users[user], method, list, body)
				framework.ExpectNoError(err, "%s %s as %s on the cluster's API server", method, list, user)
				return onChain, r.Answer(), webhookAsked
			}
			cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "written"}}
			var ev authorizersEvidence
			ev.ABACReaderList, ev.ABACReaderListOnCluster, ev.ABACReaderListAskedWebhook = ask(abacReader, "GET", nil)
			ev.ABACReaderCreate, _, ev.ABACReaderCreateAskedWebhook = ask(abacReader, "POST", cm)
			ev.WebhookReaderList, ev.WebhookReaderListOnCluster, ev.WebhookReaderListAskedWebhook = ask(webhookReader, "GET", nil)
			ev.NobodyList, _, ev.NobodyListAskedWebhook = ask(nobody, "GET", nil)
			authorizers.Record(ev)
		})
})

// hasUser says whether an authorizer request ("user verb resource") is
// user's.
func hasUser(asked, user string) bool { return strings.HasPrefix(asked, user+" ") }

// abacPolicy is an ABAC policy file (one JSON object a line) that lets user
// read the ConfigMaps of namespace, nothing more.
func abacPolicy(user, namespace string) []byte {
	line, err := json.Marshal(map[string]any{
		"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy",
		"spec": map[string]any{"user": user, "namespace": namespace, "resource": "configmaps", "apiGroup": "", "readonly": true},
	})
	if err != nil {
		panic(err)
	}
	return append(line, '\n')
}

// Evidence: what the specs above record, under the names the claims files use.

// Requests on an API server whose authorizers are Node, ABAC, a webhook and
// RBAC, and the same requests on the cluster's own API server.
type authorizersEvidence struct {
	// ABACReaderList is the ABAC policy's reader's list of ConfigMaps on the
	// API server with the chain; ABACReaderListOnCluster the same on the
	// cluster's; ABACReaderListAskedWebhook: the authorizer webhook was asked
	// about it.
	ABACReaderList             framework.Answer `json:"abacReaderList"`
	ABACReaderListOnCluster    framework.Answer `json:"abacReaderListOnCluster"`
	ABACReaderListAskedWebhook bool             `json:"abacReaderListAskedWebhook"`
	// ABACReaderCreate: a write the read-only policy does not allow.
	ABACReaderCreate framework.Answer `json:"abacReaderCreate"`
	// ABACReaderCreateAskedWebhook: the webhook was asked about that create.
	ABACReaderCreateAskedWebhook bool `json:"abacReaderCreateAskedWebhook"`
	// WebhookReaderList, WebhookReaderListOnCluster and
	// WebhookReaderListAskedWebhook: the same for the user the webhook allows
	// to read.
	WebhookReaderList             framework.Answer `json:"webhookReaderList"`
	WebhookReaderListOnCluster    framework.Answer `json:"webhookReaderListOnCluster"`
	WebhookReaderListAskedWebhook bool             `json:"webhookReaderListAskedWebhook"`
	// NobodyList and NobodyListAskedWebhook: the same for a user no
	// authorizer allows, on the chain.
	NobodyList             framework.Answer `json:"nobodyList"`
	NobodyListAskedWebhook bool             `json:"nobodyListAskedWebhook"`
}

var authorizers = framework.DeclareEvidence[authorizersEvidence]("authorizers", specAuthorizers)
