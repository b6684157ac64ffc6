package admission

import (
	"bytes"
	"context"
	"strings"

	"github.com/onsi/ginkgo/v2"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/access"
	"github.com/kubeproof/kubeproof/webhooks"
	"github.com/kubeproof/kubeproof/webhooks/install"
)

const (
	specPolicy = "admission-policy"
	specVAP    = "admission-vap"
)

var _ = ginkgo.Describe("Admission policy: containers must have resource limits", func() {
	f := framework.New("policy")

	ginkgo.It("a validating webhook rejects a Pod without limits through kubectl, with its message, and admits one with limits",
		framework.Checks(specPolicy),
		func(ctx ginkgo.SpecContext) {
			srv := deploy(ctx, f)
			uninstallAtEnd(srv, "policy", "policy-nocode")
			framework.ExpectNoError(srv.Validating(ctx, "policy", install.Webhook{Name: "limits.kubeproof.io", Path: limits403}), "install the policy")
			effective(ctx, "the policy", func(ctx context.Context) (bool, string) {
				r := attempt(ctx, f, marker(false))
				return r.Code >= 400 && strings.Contains(r.Status.Message, webhooks.DenyMessage), r.Status.Message
			})

			ginkgo.By("kubectl apply: a Pod without limits, then one with limits")
			apply := func(name string, limits bool) kubectlApply {
				ginkgo.GinkgoHelper()
				body, err := yaml.Marshal(pod(name, limits))
				framework.ExpectNoError(err, "encode the Pod")
				res, err := f.Kubectl.Run(ctx, bytes.NewReader(body), "apply", "-f", "-", "--namespace", f.Namespace)
				framework.ExpectNoError(err, "run kubectl apply")
				return kubectlApply{ExitCode: res.ExitCode, Stdout: strings.TrimSpace(res.Stdout),
					Stderr: f.Generalize(strings.TrimSpace(res.Stderr), nil), Stored: exists(ctx, f, name)}
			}
			kubectlSeen.Record(kubectlEvidence{NoLimits: apply("no-limits", false), WithLimits: apply("with-limits", true)})

			ginkgo.By("the denial's status code, when the webhook sets 403 and when it sets none")
			with403 := create(ctx, f, pod("raw-403", false), false)
			framework.ExpectNoError(srv.Uninstall(ctx, "policy"), "remove the policy")
			framework.ExpectNoError(srv.Validating(ctx, "policy-nocode", install.Webhook{Name: "limits-nocode.kubeproof.io", Path: limitsNone}), "install the policy without a code")
			effective(ctx, "the policy without a code", func(ctx context.Context) (bool, string) {
				r := attempt(ctx, f, marker(false))
				return strings.Contains(r.Status.Message, "limits-nocode.kubeproof.io"), r.Status.Message
			})
			without := create(ctx, f, pod("raw-nocode", false), false)
			denial.Record(denialEvidence{
				Code403: with403.Code, CodeNone: without.Code, Reason403: string(with403.Status.Reason),
				ReasonNone: string(without.Status.Reason), Message: with403.Status.Message,
				DeniedByWebhook: strings.Contains(with403.Status.Message, webhooks.DenyMessage) && strings.Contains(without.Status.Message, webhooks.DenyMessage),
			})
		})

	ginkgo.It("the same policy as a ValidatingAdmissionPolicy (CEL, inside the API server)",
		framework.Checks(specVAP),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.ServiceAccounts)
			f.NeedsAccess(access.Policies)
			name := "kubeproof-" + f.Namespace + "-limits"
			fail := admissionregistrationv1.Fail
			policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
					FailurePolicy: &fail,
					MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
						RuleWithOperations: admissionregistrationv1.RuleWithOperations{
							Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
							Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
						},
					}}},
					Validations: []admissionregistrationv1.Validation{{
						Expression: "object.spec.containers.all(c, has(c.resources) && has(c.resources.limits) && size(c.resources.limits) > 0)",
						Message:    webhooks.DenyMessage,
					}},
				},
			}
			policies := f.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies()
			_, err := policies.Create(ctx, framework.Own(policy), metav1.CreateOptions{})
			framework.ExpectNoError(err, "create the ValidatingAdmissionPolicy")
			ginkgo.DeferCleanup(func(ctx context.Context) { _ = policies.Delete(ctx, name, metav1.DeleteOptions{}) })
			bindings := f.Client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
			_, err = bindings.Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: framework.RunLabels()},
				Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
					PolicyName:        name,
					ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
					MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
						MatchLabels: map[string]string{"kubernetes.io/metadata.name": f.Namespace}}},
				},
			}, metav1.CreateOptions{})
			framework.ExpectNoError(err, "bind the ValidatingAdmissionPolicy")
			ginkgo.DeferCleanup(func(ctx context.Context) { _ = bindings.Delete(ctx, name, metav1.DeleteOptions{}) })
			effective(ctx, "the ValidatingAdmissionPolicy", func(ctx context.Context) (bool, string) {
				r := attempt(ctx, f, marker(false))
				return r.Code >= 400 && strings.Contains(r.Status.Message, webhooks.DenyMessage), r.Status.Message
			})
			d := create(ctx, f, pod("no-limits", false), false)
			admitted := create(ctx, f, pod("with-limits", true), false)
			vap.Record(vapEvidence{Code: d.Code, Reason: string(d.Status.Reason),
				Message:            f.Generalize(d.Status.Message, map[string]string{name: "{policy}"}),
				DeniedByPolicy:     strings.Contains(d.Status.Message, "ValidatingAdmissionPolicy") && strings.Contains(d.Status.Message, webhooks.DenyMessage),
				AdmittedWithLimits: admitted.Code})
		})
})

// Evidence: what the specs above record, under the names the claims files use.

// kubectl apply of one Pod.
type kubectlApply struct {
	// ExitCode, Stdout and Stderr are kubectl's exit code and output
	// (trimmed, stderr generalized).
	ExitCode int    `json:"exitCode"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	// Stored: the Pod existed afterwards.
	Stored bool `json:"stored"`
}

// kubectl apply of a Pod the limits policy denies and of one it admits.
type kubectlEvidence struct {
	// NoLimits is the Pod without resource limits (which the policy denies);
	// WithLimits the one with them.
	NoLimits   kubectlApply `json:"no-limits"`
	WithLimits kubectlApply `json:"with-limits"`
}

// The denial's status, from a webhook that sets code 403 and one that sets
// none.
type denialEvidence struct {
	// Code403 and Reason403 are the status code and reason of the denial by
	// the webhook that sets code 403; CodeNone and ReasonNone those by the
	// one that sets none.
	Code403    int    `json:"code403"`
	CodeNone   int    `json:"codeNone"`
	Reason403  string `json:"reason403"`
	ReasonNone string `json:"reasonNone"`
	// Message is the Status message of the 403 denial.
	Message string `json:"message"`
	// DeniedByWebhook: both answers carry the webhook's own message.
	DeniedByWebhook bool `json:"deniedByWebhook"`
}

// The same rule as a ValidatingAdmissionPolicy.
type vapEvidence struct {
	// Code, Reason and Message are the status code, reason and message
	// (generalized) of the create of a Pod without limits.
	Code    int    `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// DeniedByPolicy: that message names a ValidatingAdmissionPolicy and
	// carries the policy's message.
	DeniedByPolicy bool `json:"deniedByPolicy"`
	// AdmittedWithLimits is the status code of the create of a Pod with
	// limits.
	AdmittedWithLimits int `json:"admittedWithLimits"`
}

var (
	kubectlSeen = framework.DeclareEvidence[kubectlEvidence]("kubectl", specPolicy)
	denial      = framework.DeclareEvidence[denialEvidence]("denial", specPolicy)
	vap         = framework.DeclareEvidence[vapEvidence]("vap", specVAP)
)
