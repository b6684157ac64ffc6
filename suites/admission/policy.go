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
	"github.com/kubeproof/kubeproof/webhooks"
	"github.com/kubeproof/kubeproof/webhooks/install"
)

var _ = ginkgo.Describe("Admission policy: containers must have resource limits", func() {
	f := framework.New("policy")

	ginkgo.It("a validating webhook rejects a Pod without limits through kubectl, with its message, and admits one with limits",
		framework.Checks("admission-policy", "004-DENY-403-LIMITS"),
		func(ctx ginkgo.SpecContext) {
			srv := deploy(ctx, f)
			uninstallAtEnd(srv, "policy", "policy-nocode")
			framework.ExpectNoError(srv.Validating(ctx, "policy", install.Webhook{Name: "limits.kubeproof.io", Path: limits403}), "install the policy")
			effective(ctx, "the policy", func(ctx context.Context) (bool, string) {
				r := create(ctx, f, marker(false), true)
				return r.Code >= 400 && strings.Contains(r.Status.Message, webhooks.DenyMessage), r.Status.Message
			})

			ginkgo.By("kubectl apply: a Pod without limits, then one with limits")
			kubectl := map[string]any{}
			for name, limits := range map[string]bool{"no-limits": false, "with-limits": true} {
				body, err := yaml.Marshal(pod(name, limits))
				framework.ExpectNoError(err, "encode the Pod")
				res, err := f.Kubectl.Run(ctx, bytes.NewReader(body), "apply", "-f", "-", "--namespace", f.Namespace)
				framework.ExpectNoError(err, "run kubectl apply")
				kubectl[name] = map[string]any{"exitCode": res.ExitCode, "stdout": strings.TrimSpace(res.Stdout),
					"stderr": f.Generalize(strings.TrimSpace(res.Stderr), nil), "stored": exists(ctx, f, name)}
			}
			framework.Evidence("kubectl", kubectl)

			ginkgo.By("the denial's status code, when the webhook sets 403 and when it sets none")
			with403 := create(ctx, f, pod("raw-403", false), false)
			framework.ExpectNoError(srv.Uninstall(ctx, "policy"), "remove the policy")
			framework.ExpectNoError(srv.Validating(ctx, "policy-nocode", install.Webhook{Name: "limits-nocode.kubeproof.io", Path: limitsNone}), "install the policy without a code")
			effective(ctx, "the policy without a code", func(ctx context.Context) (bool, string) {
				r := create(ctx, f, marker(false), true)
				return strings.Contains(r.Status.Message, "limits-nocode.kubeproof.io"), r.Status.Message
			})
			without := create(ctx, f, pod("raw-nocode", false), false)
			framework.Evidence("denial", map[string]any{
				"code403": with403.Code, "codeNone": without.Code, "reason403": string(with403.Status.Reason),
				"reasonNone": string(without.Status.Reason), "message": with403.Status.Message,
			})
		})

	ginkgo.It("the same policy as a ValidatingAdmissionPolicy (CEL, inside the API server)",
		framework.Checks("admission-vap", "004-DENY-403-LIMITS"),
		func(ctx ginkgo.SpecContext) {
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
			vap := f.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies()
			_, err := vap.Create(ctx, policy, metav1.CreateOptions{})
			framework.ExpectNoError(err, "create the ValidatingAdmissionPolicy")
			ginkgo.DeferCleanup(func(ctx context.Context) { _ = vap.Delete(ctx, name, metav1.DeleteOptions{}) })
			bindings := f.Client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
			_, err = bindings.Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
				ObjectMeta: metav1.ObjectMeta{Name: name},
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
				r := create(ctx, f, marker(false), true)
				return r.Code >= 400, r.Status.Message
			})
			denied := create(ctx, f, pod("no-limits", false), false)
			admitted := create(ctx, f, pod("with-limits", true), false)
			framework.Evidence("vap", map[string]any{"code": denied.Code, "reason": string(denied.Status.Reason),
				"message": f.Generalize(denied.Status.Message, map[string]string{name: "{policy}"}), "admittedWithLimits": admitted.Code})
		})
})
