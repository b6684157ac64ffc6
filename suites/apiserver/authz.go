package apiserver

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/contract/ownership"
	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/access"
	"github.com/kubeproof/kubeproof/kube/metrics"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
)

const rbacFixture = "rbac-deployment-manager.yaml"

const (
	specRBAC      = "apiserver-rbac"
	specNodeAuthz = "apiserver-node-authz"
)

var _ = ginkgo.Describe("API server authorization", func() {
	f := framework.New("authz")

	ginkgo.It("RBAC: the seed's ClusterRole and RoleBinding, applied as written, give donghyun Deployments in default only",
		framework.Checks(specRBAC, framework.Disturbs("applies the seed's ClusterRole and a RoleBinding in namespace default, as written")),
		func(ctx ginkgo.SpecContext) {
			f.NeedsAccess(access.CSRApproval, access.ClusterRoles, access.DefaultBindings, access.AccessReviews)
			attempts := attemptsFor(f, f.ClientIdentity(ctx, "donghyun", "dev-team"))

			ginkgo.By("before the binding: donghyun creates a Deployment in default")
			beforeBinding.Record(attempts.deploymentIn(ctx, "default").Answer())
			// The claims about RBAC's cache and attributes speak of RBAC
			// deciding: only if nothing allows donghyun before the binding
			// does a binding's effect show RBAC at work.
			allowedBefore, reasonBefore, err := attempts.review(ctx, "default", "apps", "deployments", "create")
			framework.ExpectNoError(err, "SubjectAccessReview before the binding")

			ginkgo.By("kubectl apply -f the seed's RBAC YAML, as written")
			ginkgo.DeferCleanup(func(ctx context.Context) {
				_ = f.Client.RbacV1().RoleBindings("default").Delete(ctx, "deploy-binding", metav1.DeleteOptions{})
				_ = f.Client.RbacV1().ClusterRoles().Delete(ctx, "deployment-manager", metav1.DeleteOptions{})
			})
			res, err := f.Kubectl.Run(ctx, bytes.NewReader(fixtures.MustRead(rbacFixture)), "apply", "-f", "-")
			framework.ExpectNoError(err, "run kubectl apply")
			seedYAML.Record(seedYAMLEvidence{ExitCode: res.ExitCode, Stdout: strings.TrimSpace(res.Stdout), Stderr: strings.TrimSpace(res.Stderr)})
			// The seed's objects as written carry no label: mark them as
			// the run's, for `kubeproof cleanup` (a label changes nothing
			// RBAC reads). Either may be missing if apply refused it.
			label := ownership.Label + "=" + framework.RunLabels()[ownership.Label]
			_, _ = f.Kubectl.Run(ctx, nil, "label", "--overwrite", "clusterrole/deployment-manager", label)
			_, _ = f.Kubectl.Run(ctx, nil, "label", "--overwrite", "--namespace", "default", "rolebinding/deploy-binding", label)
			if _, err := f.Client.RbacV1().RoleBindings("default").Get(ctx, "deploy-binding", metav1.GetOptions{}); err != nil {
				// The RoleBinding as printed was refused: apply the smallest
				// correction (roleRef.apiGroup) and say so in the evidence.
				ginkgo.By("the RoleBinding was refused; applying it with roleRef.apiGroup added")
				rb := seedRoleBinding()
				rb.RoleRef.APIGroup = rbacv1.GroupName
				_, err := f.Client.RbacV1().RoleBindings("default").Create(ctx, framework.Own(rb), metav1.CreateOptions{})
				framework.ExpectNoError(err, "create the corrected RoleBinding")
				correction.Record("roleRef.apiGroup: rbac.authorization.k8s.io added")
			}

			ginkgo.By("waiting until RBAC allows by the binding")
			began := time.Now()
			err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, framework.Timeout.API, true, func(ctx context.Context) (bool, error) {
				allowed, reason, err := attempts.review(ctx, "default", "apps", "deployments", "create")
				return allowed && strings.HasPrefix(reason, "RBAC:"), err
			})
			if allowedBefore {
				bindingEffective.Unobservable("donghyun was allowed before the binding (%q): another authorizer than RBAC decides", reasonBefore)
			} else {
				bindingEffective.Record(bindingEffectiveEvidence{Effective: err == nil, Ms: framework.Millis(time.Since(began))})
			}

			ginkgo.By("after the binding: what donghyun may and may not do")
			after := map[string]framework.Response{
				"defaultDeployments": attempts.deploymentIn(ctx, "default"),
				"otherNamespace":     attempts.deploymentIn(ctx, f.Namespace),
				"pods":               attempts.podIn(ctx, "default"),
				"secrets":            attempts.get(ctx, "/api/v1/namespaces/default/secrets"),
			}
			afterBinding.Record(afterBindingEvidence{DefaultDeployments: after["defaultDeployments"].Code, OtherNamespace: after["otherNamespace"].Code,
				Pods: after["pods"].Code, Secrets: after["secrets"].Code})

			ginkgo.By("SubjectAccessReview with the same attributes")
			sar := subjectAccessReviewEvidence{Allowed: map[string]bool{}, AgreesWithRequests: true}
			for k, attrs := range map[string][4]string{
				"defaultDeployments": {"default", "apps", "deployments", "create"},
				"otherNamespace":     {f.Namespace, "apps", "deployments", "create"},
				"pods":               {"default", "", "pods", "create"},
				"secrets":            {"default", "", "secrets", "list"},
			} {
				allowed, reason, err := attempts.review(ctx, attrs[0], attrs[1], attrs[2], attrs[3])
				framework.ExpectNoError(err, "SubjectAccessReview for %s", k)
				sar.Allowed[k] = allowed
				sar.AgreesWithRequests = sar.AgreesWithRequests && allowed == (after[k].Code < 300)
				if k == "defaultDeployments" {
					sar.AllowedBy = reason
				}
			}
			ginkgo.By("RBAC's decisions, counted against the API server's etcd requests for RBAC objects")
			client := f.Client.CoreV1().RESTClient()
			if _, err := metrics.Scrape(ctx, client); err != nil {
				rbacReads.Unobservable("the API server's metrics cannot be read here: %v", err)
			} else if allowedBefore {
				rbacReads.Unobservable("donghyun was allowed before the binding (%q): another authorizer than RBAC decides", reasonBefore)
			} else {
				decide := func() error {
					for _, verb := range []string{"create", "delete", "get", "list"} {
						if _, _, err := attempts.review(ctx, "default", "apps", "deployments", verb); err != nil {
							return err
						}
					}
					return nil
				}
				reads := etcdRequestsDuring(ctx, client, "four SubjectAccessReviews", nil, decide,
					[]string{"roles", "rolebindings", "clusterroles", "clusterrolebindings"}, "get", "list", "listWithCount", "listOnlyKeys")
				rbacReads.Record(rbacReadsEvidence{Decisions: 4, EtcdReads: reads[0] + reads[1] + reads[2] + reads[3], Trials: framework.GrowthTrials})
			}
			// When another authorizer than RBAC decided, the claim about
			// RBAC's attributes cannot be seen here.
			switch {
			case allowedBefore:
				subjectAccessReview.Unobservable("donghyun was allowed before the binding (%q): another authorizer than RBAC decides", reasonBefore)
			case !strings.HasPrefix(sar.AllowedBy, "RBAC:"):
				subjectAccessReview.Unobservable("RBAC did not answer: the allowing authorizer said %q", sar.AllowedBy)
			default:
				subjectAccessReview.Record(sar)
			}
		})

	ginkgo.It("Node authorizer and NodeRestriction: a node reads what its own Pods use and changes only itself",
		framework.Checks(specNodeAuthz, framework.Disturbs("adds a Node object and acts with a node's identity")),
		func(ctx ginkgo.SpecContext) {
			f.NeedsAccess(access.CSRApproval, access.Nodes)
			node := f.WorkerNodes(ctx)[0].Name
			nodeCfg := f.ClientIdentity(ctx, "system:node:"+node, "system:nodes")

			ginkgo.By("two Secrets: one used by a Pod bound to this node, one by a Pod bound elsewhere")
			for _, s := range []string{"mine", "other"} {
				_, err := f.Client.CoreV1().Secrets(f.Namespace).Create(ctx, &corev1.Secret{
					ObjectMeta: metav1.ObjectMeta{Name: "secret-" + s}, StringData: map[string]string{"k": s}}, metav1.CreateOptions{})
				framework.ExpectNoError(err, "create secret-%s", s)
			}
			f.Needs(framework.ServiceAccounts)
			mine := podUsingSecret("pod-mine", "secret-mine", node)
			other := podUsingSecret("pod-other", "secret-other", "kubeproof-absent-node")
			for _, p := range []*corev1.Pod{mine, other} {
				_, err := f.Client.CoreV1().Pods(f.Namespace).Create(ctx, p, metav1.CreateOptions{})
				framework.ExpectNoError(err, "create %s", p.Name)
			}
			// No kubelet will ever confirm that the absent node's Pod
			// stopped, so a graceful delete would hold the namespace until
			// the Pod garbage collector removes it (a minute or more).
			ginkgo.DeferCleanup(func(ctx context.Context) error {
				err := f.Client.CoreV1().Pods(f.Namespace).Delete(ctx, other.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
				if apierrors.IsNotFound(err) {
					return nil
				}
				return err
			})

			ginkgo.By("as the node: the Secret of its own Pod, once the authorizer's graph has the Pod")
			nsPath := "/api/v1/namespaces/" + f.Namespace
			var mineRes framework.Response
			_ = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, framework.Timeout.API, true, func(ctx context.Context) (bool, error) {
				r, err := framework.Request(ctx, nodeCfg, "GET", nsPath+"/secrets/secret-mine", nil)
				mineRes = r
				return err == nil && r.Code == 200, nil
			})
			otherRes, err := framework.Request(ctx, nodeCfg, "GET", nsPath+"/secrets/secret-other", nil)
			framework.ExpectNoError(err, "read the other Secret")
			podOther, err := framework.Request(ctx, nodeCfg, "GET", nsPath+"/pods/pod-other", nil)
			framework.ExpectNoError(err, "read the Pod bound elsewhere")

			ginkgo.By("as the node: changing another Node, and a restricted label on itself")
			// Tainted, so that no other spec's Pod is scheduled to it, and
			// labelled as a node without a kubelet, so that specs running
			// meanwhile that judge the real nodes leave it out.
			fake := &corev1.Node{ObjectMeta: metav1.ObjectMeta{GenerateName: "kubeproof-fake-node-", Labels: map[string]string{framework.SimulatedLabel: "true"}},
				Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: framework.SimulatedTaint, Value: f.Namespace, Effect: corev1.TaintEffectNoSchedule}}}}
			fake, err = f.Client.CoreV1().Nodes().Create(ctx, framework.Own(fake), metav1.CreateOptions{})
			framework.ExpectNoError(err, "create a Node object no kubelet runs")
			ginkgo.DeferCleanup(func(ctx context.Context) {
				_ = f.Client.CoreV1().Nodes().Delete(ctx, fake.Name, metav1.DeleteOptions{})
			})
			patch := func(name, label string) framework.Response {
				r, err := framework.RequestWithType(ctx, nodeCfg, "PATCH", "/api/v1/nodes/"+name, "application/merge-patch+json",
					fmt.Sprintf(`{"metadata":{"labels":{%q:"x"}}}`, label))
				framework.ExpectNoError(err, "patch node %s", name)
				return r
			}
			otherNode := patch(fake.Name, "kubeproof.io/changed-by-another-node")
			restricted := patch(node, "node-restriction.kubernetes.io/kubeproof")
			nodeAccess.Record(nodeAccessEvidence{
				SecretOfMyPod:       mineRes.Code,
				SecretOfOtherPod:    otherRes.Code,
				PodOnOtherNode:      podOther.Code,
				PatchOtherNode:      otherNode.Code,
				PatchOtherNodeMsg:   f.Generalize(otherNode.Status.Message, map[string]string{node: "{node}", fake.Name: "{other-node}"}),
				RestrictedLabel:     restricted.Code,
				RestrictedLabelMsg:  f.Generalize(restricted.Status.Message, map[string]string{node: "{node}"}),
				SecretOfOtherPodMsg: f.Generalize(otherRes.Status.Message, map[string]string{node: "{node}"}),
			})
		})
})

// attempts are requests one identity makes, for authorization checks.
type attempts struct {
	f   *framework.Framework
	cfg *rest.Config
}

func attemptsFor(f *framework.Framework, cfg *rest.Config) attempts { return attempts{f: f, cfg: cfg} }

// deploymentIn tries to create a Deployment in ns (server-side dry run:
// authorization is decided, nothing is stored).
func (a attempts) deploymentIn(ctx context.Context, ns string) framework.Response {
	ginkgo.GinkgoHelper()
	return a.createDryRun(ctx, "/apis/apps/v1/namespaces/"+ns+"/deployments", "deployment.yaml")
}

func (a attempts) podIn(ctx context.Context, ns string) framework.Response {
	ginkgo.GinkgoHelper()
	return a.createDryRun(ctx, "/api/v1/namespaces/"+ns+"/pods", "pod.yaml")
}

// createDryRun POSTs a fixture to path as a server-side dry run.
func (a attempts) createDryRun(ctx context.Context, path, fixture string) framework.Response {
	ginkgo.GinkgoHelper()
	body, err := yaml.YAMLToJSON(fixtures.MustRead(fixture))
	framework.ExpectNoError(err, "read %s", fixture)
	r, err := framework.Request(ctx, a.cfg, "POST", path+"?dryRun=All", body)
	framework.ExpectNoError(err, "create %s at %s", fixture, path)
	return r
}

func (a attempts) get(ctx context.Context, path string) framework.Response {
	ginkgo.GinkgoHelper()
	r, err := framework.Request(ctx, a.cfg, "GET", path, nil)
	framework.ExpectNoError(err, "GET %s", path)
	return r
}

// review asks a SubjectAccessReview (as admin) whether donghyun may, and
// the reason the deciding authorizer gave.
func (a attempts) review(ctx context.Context, ns, group, resource, verb string) (bool, string, error) {
	sar, err := a.f.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   "donghyun",
			Groups: []string{"dev-team", "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: ns, Group: group, Resource: resource, Verb: verb,
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, "", err
	}
	return sar.Status.Allowed, sar.Status.Reason, nil
}

func seedRoleBinding() *rbacv1.RoleBinding {
	docs := strings.Split(string(fixtures.MustRead(rbacFixture)), "\n---\n")
	var rb rbacv1.RoleBinding
	if err := yaml.Unmarshal([]byte(docs[1]), &rb); err != nil {
		panic(fmt.Sprintf("%s: %v", rbacFixture, err))
	}
	return &rb
}

func podUsingSecret(name, secret, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: podsecurity.Restricted(corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{
				Name: "app", Image: images.TestApp.PodRef(),
				EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: secret}}}},
			}},
		}),
	}
}

// Evidence: what the specs above record, under the names the claims files use.

// kubectl apply of the seed's RBAC YAML.
type seedYAMLEvidence struct {
	// ExitCode, Stdout and Stderr are kubectl apply's, trimmed.
	ExitCode int    `json:"exitCode"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
}

// How long the API server took to authorize by the new binding (Effective
// false: not within Timeout.API).
type bindingEffectiveEvidence struct {
	// Effective: a SubjectAccessReview allowed the create by RBAC within
	// Timeout.API.
	Effective bool `json:"effective"`
	// Ms is the time from the apply to that answer (or to giving up).
	Ms float64 `json:"ms"`
}

// The etcd requests the API server made for RBAC objects (Roles,
// ClusterRoles and their bindings) while RBAC decided a few requests: the
// least over several trials (etcdRequestsDuring).
type rbacReadsEvidence struct {
	// Decisions is how many SubjectAccessReviews RBAC decided (4).
	Decisions int `json:"decisions"`
	// EtcdReads is the API server's etcd get and list requests for RBAC
	// objects meanwhile.
	EtcdReads int `json:"etcdReads"`
	// Trials is how many times that was measured.
	Trials int `json:"trials"`
}

// What donghyun's requests got once the binding applied.
type afterBindingEvidence struct {
	// DefaultDeployments is the status code of donghyun's Deployment create
	// in default.
	DefaultDeployments int `json:"defaultDeployments"`
	// OtherNamespace is that of a Deployment create in another namespace.
	OtherNamespace int `json:"otherNamespace"`
	// Pods is that of a Pod create in default.
	Pods int `json:"pods"`
	// Secrets is that of a list of Secrets in default.
	Secrets int `json:"secrets"`
}

// SubjectAccessReviews of the same attributes, and the authorizer that
// answered them.
type subjectAccessReviewEvidence struct {
	// Allowed is a SubjectAccessReview's answer for each of those requests'
	// attributes, by the same keys.
	Allowed map[string]bool `json:"allowed"`
	// AgreesWithRequests: each answer matches the request's outcome (allowed
	// when the code is below 300).
	AgreesWithRequests bool `json:"agreesWithRequests"`
	// AllowedBy is the allowing authorizer's reason ("RBAC: allowed by
	// RoleBinding ...").
	AllowedBy string `json:"allowedBy"`
}

// What a node's credentials may do.
type nodeAccessEvidence struct {
	// SecretOfMyPod is the status code of the node's GET of the Secret a Pod
	// bound to it uses.
	SecretOfMyPod int `json:"secretOfMyPod"`
	// SecretOfOtherPod is that of the Secret of a Pod bound to another node;
	// SecretOfOtherPodMsg its message, generalized.
	SecretOfOtherPod int `json:"secretOfOtherPod"`
	// PodOnOtherNode is that of a GET of the Pod bound to another node.
	PodOnOtherNode int `json:"podOnOtherNode"`
	// PatchOtherNode is that of the node's label patch of another Node;
	// PatchOtherNodeMsg its message, generalized.
	PatchOtherNode    int    `json:"patchOtherNode"`
	PatchOtherNodeMsg string `json:"patchOtherNodeMsg"`
	// RestrictedLabel is that of the node setting a
	// node-restriction.kubernetes.io/ label on itself; RestrictedLabelMsg its
	// message, generalized.
	RestrictedLabel     int    `json:"restrictedLabel"`
	RestrictedLabelMsg  string `json:"restrictedLabelMsg"`
	SecretOfOtherPodMsg string `json:"secretOfOtherPodMsg"`
}

var (
	// donghyun's create of a Deployment in default, before the binding.
	beforeBinding = framework.DeclareEvidence[framework.Answer]("beforeBinding", specRBAC)
	seedYAML      = framework.DeclareEvidence[seedYAMLEvidence]("seedYAML", specRBAC)
	// The change made to the seed's RoleBinding, recorded only when the API
	// server refused it as printed.
	correction          = framework.DeclareEvidence[string]("correction", specRBAC)
	bindingEffective    = framework.DeclareEvidence[bindingEffectiveEvidence]("bindingEffective", specRBAC)
	rbacReads           = framework.DeclareEvidence[rbacReadsEvidence]("rbacReads", specRBAC)
	afterBinding        = framework.DeclareEvidence[afterBindingEvidence]("afterBinding", specRBAC)
	subjectAccessReview = framework.DeclareEvidence[subjectAccessReviewEvidence]("subjectAccessReview", specRBAC)
	nodeAccess          = framework.DeclareEvidence[nodeAccessEvidence]("nodeAccess", specNodeAuthz)
)
