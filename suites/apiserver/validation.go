package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/access"
	"github.com/kubeproof/kubeproof/kube/identity"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
)

// invalid Pods, as JSON bodies.
var (
	podWithoutContainers = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"no-containers"},"spec":{}}`
	podWithWrongType     = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"wrong-type"},"spec":{"containers":"web"}}`
	podValid             = validPodJSON("valid", "")
	podWithUnknownField  = validPodJSON("unknown-field", `"kubeproofUnknownField":true`)
	// A Deployment whose selector does not select its own Pod template:
	// well-formed, decodable, and invalid.
	// YAML whose syntax is broken (a flow sequence never closed).
	brokenYAML                 = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: broken-yaml\nspec:\n  containers:\n  - name: web\n    image: [kubeproof.local/testapp:v1\n"
	deploymentSelectorMismatch = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"selector-mismatch"},` +
		`"spec":{"replicas":1,"selector":{"matchLabels":{"app":"a"}},"template":{"metadata":{"labels":{"app":"b"}},` +
		`"spec":{"containers":[{"name":"web","image":"kubeproof.local/testapp:v1"}]}}}}`
	// (Dry runs and refused objects: the image is never pulled, its loaded
	// name serves on every cluster.)
)

// validPodJSON is a valid Pod of our image, as JSON, that passes the
// restricted Pod Security Standard (so that what answers on a hardened
// cluster is still validation); extraSpec is added to its spec as is.
func validPodJSON(name, extraSpec string) string {
	spec, err := json.Marshal(podsecurity.Restricted(corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: images.TestApp.Ref}}}))
	if err != nil {
		panic(err)
	}
	if extraSpec != "" {
		spec = append(append(spec[:len(spec)-1:len(spec)-1], ","+extraSpec...), '}')
	}
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q},"spec":%s}`, name, spec)
}

const specValidation = "apiserver-validation"

var _ = ginkgo.Describe("API server validation", func() {
	f := framework.New("validation")

	ginkgo.It("rejects objects that do not fit the schema, and says why",
		framework.Checks(specValidation),
		func(ctx ginkgo.SpecContext) {
			f.NeedsAccess(access.CSRApproval, access.AccessReviews)
			pods := "/api/v1/namespaces/" + f.Namespace + "/pods"
			post := func(cfg *rest.Config, query, body string) framework.Response {
				ginkgo.GinkgoHelper()
				r, err := framework.Request(ctx, cfg, "POST", pods+query, body)
				framework.ExpectNoError(err, "POST a Pod")
				return r
			}
			invalid := func(r framework.Response, name string) invalidEvidence {
				_, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, name, metav1.GetOptions{})
				a := r.Answer()
				return invalidEvidence{Answer: a, Stored: err == nil,
					RejectedByValidation: (a.Code == 422 && a.Reason == string(metav1.StatusReasonInvalid)) || (a.Code == 400 && a.Reason == string(metav1.StatusReasonBadRequest))}
			}

			ginkgo.By("a Pod without its required containers")
			missingField.Record(invalid(post(f.RESTConfig, "", podWithoutContainers), "no-containers"))

			ginkgo.By("a Pod whose containers field has the wrong type")
			wrongType.Record(invalid(post(f.RESTConfig, "", podWithWrongType), "wrong-type"))

			ginkgo.By("YAML with broken syntax: through kubectl apply, and sent to the API server as YAML")
			res, err := f.Kubectl.Run(ctx, strings.NewReader(brokenYAML), "apply", "-f", "-", "--namespace", f.Namespace)
			framework.ExpectNoError(err, "run kubectl apply")
			stderr := strings.TrimSpace(res.Stderr)
			asYAML, err := framework.RequestWithType(ctx, f.RESTConfig, "POST", pods, "application/yaml", brokenYAML)
			framework.ExpectNoError(err, "POST YAML")
			yamlSyntax.Record(yamlSyntaxEvidence{KubectlExitCode: res.ExitCode, KubectlStderr: f.Generalize(stderr, nil),
				KubectlRefusedByServer: strings.HasPrefix(stderr, "Error from server"), APIServer: asYAML.Answer()})

			ginkgo.By("a patch that would make a ConfigMap invalid, on one that exists and on one that does not")
			_, err = f.Client.CoreV1().ConfigMaps(f.Namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "patch-target"}}, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create the ConfigMap to patch")
			patch := func(name string) framework.Answer {
				ginkgo.GinkgoHelper()
				r, err := framework.RequestWithType(ctx, f.RESTConfig, "PATCH", "/api/v1/namespaces/"+f.Namespace+"/configmaps/"+name,
					"application/merge-patch+json", `{"data":{"not a valid key!":"x"}}`)
				framework.ExpectNoError(err, "PATCH ConfigMap %s", name)
				return r.Answer()
			}
			patchOrder.Record(patchOrderEvidence{Existing: patch("patch-target"), Missing: patch("patch-missing")})

			ginkgo.By("a Deployment whose selector does not match its Pod template")
			r, err := framework.Request(ctx, f.RESTConfig, "POST", "/apis/apps/v1/namespaces/"+f.Namespace+"/deployments", deploymentSelectorMismatch)
			framework.ExpectNoError(err, "POST a Deployment")
			_, getErr := f.Client.AppsV1().Deployments(f.Namespace).Get(ctx, "selector-mismatch", metav1.GetOptions{})
			a := r.Answer()
			invalidDeployment.Record(invalidEvidence{Answer: a, Stored: getErr == nil,
				RejectedByValidation: a.Code == 422 && a.Reason == string(metav1.StatusReasonInvalid)})

			ginkgo.By("a Pod with an unknown field, under each field validation level")
			level := func(l string) framework.Answer {
				return post(f.RESTConfig, "?dryRun=All&fieldValidation="+l, podWithUnknownField).Answer()
			}
			unknownField.Record(unknownFieldEvidence{Strict: level("Strict"), Warn: level("Warn"), Ignore: level("Ignore")})

			ginkgo.By("a ConfigMap created through client-go, as an SDK creates it")
			var code int
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "from-client-go"}, Data: map[string]string{"k": "v"}}
			sent := f.Client.CoreV1().RESTClient().Post().Namespace(f.Namespace).Resource("configmaps").Body(cm).Do(ctx).StatusCode(&code)
			framework.ExpectNoError(sent.Error(), "create a ConfigMap through client-go")
			clientGoCreate.Record(clientGoCreateEvidence{Code: code})

			ginkgo.By("the same through kubectl (its own default is strict)")
			run := func(body string, args ...string) kubectlRun {
				ginkgo.GinkgoHelper()
				res, err := f.Kubectl.Run(ctx, bytes.NewReader([]byte(body)), append(args, "--namespace", f.Namespace)...)
				framework.ExpectNoError(err, "run kubectl %v", args)
				return kubectlRun{ExitCode: res.ExitCode, Stderr: f.Generalize(strings.TrimSpace(res.Stderr), nil)}
			}
			validationKubectl.Record(validationKubectlEvidence{
				MissingField:       run(podWithoutContainers, "create", "--dry-run=server", "-f", "-"),
				UnknownFieldStrict: run(podWithUnknownField, "create", "--dry-run=server", "-f", "-"),
				UnknownFieldWarn:   run(podWithUnknownField, "create", "--dry-run=server", "--validate=warn", "-f", "-"),
			})

			ginkgo.By("an invalid Pod from a user who may not create Pods here: which check answers first?")
			nobody := f.ClientIdentity(ctx, "kubeproof-nobody")
			valid := post(nobody, "?dryRun=All", podValid)
			sar, err := f.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: "kubeproof-nobody", Groups: []string{"system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: f.Namespace, Resource: "pods", Verb: "create"},
			}}, metav1.CreateOptions{})
			framework.ExpectNoError(err, "ask whether kubeproof-nobody may create Pods")
			unauthorized.Record(unauthorizedEvidence{ValidPodCode: valid.Code, Allowed: sar.Status.Allowed, Reason: sar.Status.Reason})
			if valid.Code == 403 && !sar.Status.Allowed {
				r := post(nobody, "", podWithoutContainers)
				invalidAndForbidden.Record(r.Answer())
				forbidden.Record(forbiddenEvidence{Code: valid.Code})
			} else {
				// Only a user who is refused shows where authorization
				// stands: this one was let through.
				why := fmt.Sprintf("the user meant to be unauthorized was allowed to create Pods (a valid Pod got HTTP %d; SubjectAccessReview allowed=%t %q)", valid.Code, sar.Status.Allowed, sar.Status.Reason)
				invalidAndForbidden.Unobservable(why)
				forbidden.Unobservable(why)
			}

			ginkgo.By("a bad token with an invalid Pod")
			invalidAndUnauthenticated.Record(post(identity.Bearer(f.RESTConfig, "kubeproof-not-a-token"), "", podWithoutContainers).Answer())
		})
})

// Evidence: what the specs above record, under the names the claims files use.

// An invalid Pod: the answer, whether validation is what refused it, and
// whether anything was stored.
type invalidEvidence struct {
	framework.Answer
	// RejectedByValidation: refused as invalid (422 Invalid) or as
	// undecodable (400 BadRequest), not for another reason.
	RejectedByValidation bool `json:"rejectedByValidation"`
	// Stored: a GET found the object afterwards.
	Stored bool `json:"stored"`
}

// Broken YAML: what kubectl apply said (and whether its error came from the
// API server: "Error from server ..."), and the API server's answer to the
// same YAML sent to it as application/yaml.
type yamlSyntaxEvidence struct {
	// KubectlExitCode and KubectlStderr are kubectl apply's exit code and
	// stderr (trimmed, generalized).
	KubectlExitCode int    `json:"kubectlExitCode"`
	KubectlStderr   string `json:"kubectlStderr"`
	// KubectlRefusedByServer: that stderr begins "Error from server".
	KubectlRefusedByServer bool `json:"kubectlRefusedByServer"`
	// APIServer is the API server's answer to the same YAML POSTed as
	// application/yaml.
	APIServer framework.Answer `json:"apiServer"`
}

// A merge patch that would give a ConfigMap an invalid key: the answer for
// one that exists (validation refuses the result) and for one that does
// not (the existing object is read first: nothing to validate).
type patchOrderEvidence struct {
	// Existing is the answer for the ConfigMap that exists; Missing for one
	// that does not.
	Existing framework.Answer `json:"existing"`
	Missing  framework.Answer `json:"missing"`
}

// A create sent by client-go (its REST client, under the typed clients),
// the SDK the document names beside kubectl.
type clientGoCreateEvidence struct {
	// Code is the status code client-go got for a ConfigMap's create.
	Code int `json:"code"`
}

// A Pod with an unknown field under each field validation level.
type unknownFieldEvidence struct {
	// Strict, Warn and Ignore are the answers to a dry-run create with
	// fieldValidation at that level.
	Strict framework.Answer `json:"Strict"`
	Warn   framework.Answer `json:"Warn"`
	Ignore framework.Answer `json:"Ignore"`
}

// One kubectl command.
type kubectlRun struct {
	// ExitCode is kubectl's exit code.
	ExitCode int `json:"exitCode"`
	// Stderr is its stderr, trimmed and generalized.
	Stderr string `json:"stderr"`
}

// The invalid Pods through kubectl.
type validationKubectlEvidence struct {
	// MissingField is kubectl create --dry-run=server of a Pod without
	// containers.
	MissingField kubectlRun `json:"missingField"`
	// UnknownFieldStrict is the same of a Pod with an unknown field
	// (kubectl's default, strict validation).
	UnknownFieldStrict kubectlRun `json:"unknownFieldStrict"`
	// UnknownFieldWarn is that with --validate=warn.
	UnknownFieldWarn kubectlRun `json:"unknownFieldWarn"`
}

// The user the ordering checks send invalid Pods as: may it create a valid
// one? (Only then does its 403 show authorization's place.)
type unauthorizedEvidence struct {
	// ValidPodCode is the status code of a valid Pod's dry-run create by that
	// user.
	ValidPodCode int `json:"validPodCode"`
	// Allowed and Reason are a SubjectAccessReview's answer to whether the
	// user may create Pods in the namespace.
	Allowed bool   `json:"allowed"`
	Reason  string `json:"reason"`
}

// The unauthorized user's valid Pod, when it was refused.
type forbiddenEvidence struct {
	// Code is the status code of the valid Pod's create by the unauthorized
	// user.
	Code int `json:"code"`
}

var (
	missingField              = framework.DeclareEvidence[invalidEvidence]("missingField", specValidation)
	wrongType                 = framework.DeclareEvidence[invalidEvidence]("wrongType", specValidation)
	invalidDeployment         = framework.DeclareEvidence[invalidEvidence]("invalidDeployment", specValidation)
	yamlSyntax                = framework.DeclareEvidence[yamlSyntaxEvidence]("yamlSyntax", specValidation)
	patchOrder                = framework.DeclareEvidence[patchOrderEvidence]("patchOrder", specValidation)
	unknownField              = framework.DeclareEvidence[unknownFieldEvidence]("unknownField", specValidation)
	clientGoCreate            = framework.DeclareEvidence[clientGoCreateEvidence]("clientGoCreate", specValidation)
	validationKubectl         = framework.DeclareEvidence[validationKubectlEvidence]("kubectl", specValidation)
	unauthorized              = framework.DeclareEvidence[unauthorizedEvidence]("unauthorized", specValidation)
	invalidAndForbidden       = framework.DeclareEvidence[framework.Answer]("invalidAndForbidden", specValidation)
	forbidden                 = framework.DeclareEvidence[forbiddenEvidence]("forbidden", specValidation)
	invalidAndUnauthenticated = framework.DeclareEvidence[framework.Answer]("invalidAndUnauthenticated", specValidation)
)
