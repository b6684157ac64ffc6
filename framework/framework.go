// Package framework is what kubeproof's suites stand on: the cluster under
// test, one fresh namespace per spec with its cleanup, the real kubectl,
// capability checks, and evidence recorded for the claims report.
//
// Suites are ordinary Go packages that declare Ginkgo specs. They run from
// the kubeproof binary (`kubeproof run`) or from `go test`; both pass the
// cluster with the flags RegisterFlags adds.
package framework

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeproof/kubeproof/claims/speclink"
	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/contract/ownership"
	"github.com/kubeproof/kubeproof/kube/access"
	"github.com/kubeproof/kubeproof/kube/identity"
	"github.com/kubeproof/kubeproof/kube/kubectl"
	"github.com/kubeproof/kubeproof/kube/namespace"
	"github.com/kubeproof/kubeproof/kube/observe"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
)

// RunSuite runs every spec registered in this binary; t is a *testing.T or
// any value with Fail().
func RunSuite(t ginkgo.GinkgoTestingT, description string) bool {
	gomega.RegisterFailHandler(ginkgo.Fail)
	watchInterrupts()
	return ginkgo.RunSpecs(t, description)
}

// interrupted is set when this spec process gets SIGINT or SIGTERM. Ginkgo
// then interrupts the running spec and runs the cleanup; the suite's own
// cleanup reads this to skip what only a finished run needs.
var interrupted atomic.Bool

func watchInterrupts() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		interrupted.Store(true)
	}()
}

// Framework is what one spec uses: its own namespace and clients.
type Framework struct {
	// BaseName prefixes the namespace name.
	BaseName string

	Cluster    *cluster.Info
	RESTConfig *rest.Config
	Client     kubernetes.Interface
	Kubectl    kubectl.Runner
	// Namespace is created before each spec and deleted after it.
	Namespace string
}

// New returns a Framework whose BeforeEach gives every spec a fresh
// namespace named kp-<baseName>-<random>, deleted afterwards (the suite
// waits for all of them to be gone at its end).
// Call it in a Describe body.
func New(baseName string) *Framework {
	f := &Framework{BaseName: baseName}
	ginkgo.BeforeEach(func(ctx ginkgo.SpecContext) { f.setUp(ctx) })
	return f
}

func (f *Framework) setUp(ctx context.Context) {
	failFirstAttempt()
	info, err := Cluster()
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "load the cluster under test")
	f.Cluster = info
	f.RESTConfig, f.Client, err = cluster.NewClient(info.Kubeconfig, info.Context)
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "load kubeconfig")
	f.Kubectl = kubectl.Runner{Path: info.Kubectl, Kubeconfig: info.Kubeconfig, Context: info.Context}
	f.skipUnmetNeeds()

	begin := time.Now()
	// The namespace carries a Pod Security label only when the spec
	// declared that its Pods need more than restricted (NeedsPodSecurity).
	level := currentPodSecurity()
	want := &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "kp-" + f.BaseName + "-",
			Labels:       map[string]string{"kubeproof.io/spec": f.BaseName, ownership.Label: runID()},
		},
	}
	maps.Copy(want.Labels, podsecurity.NamespaceLabels(level))
	ns, err := f.Client.CoreV1().Namespaces().Create(ctx, want, metav1.CreateOptions{})
	if refused := PodSecurityLabelRefused(ctx, f.Client, want, err); refused != "" {
		ginkgo.Skip(podSecurityRefused(level, fmt.Sprintf("the API server refused a namespace labelled %s=%s and accepts it without the label: %s",
			podsecurity.EnforceLabel, level, refused)))
	}
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "create the spec's namespace")
	f.Namespace = ns.Name
	ginkgo.DeferCleanup(f.deleteNamespace, ns.Name)

	// Pods in a namespace wait in admission until its "default"
	// ServiceAccount exists; a spec measuring a Pod's path must not
	// measure that wait too (the documents use established namespaces).
	// Where the canary saw none made, specs that need Pods stop on Needs.
	if canary[ServiceAccounts].OK {
		lw := cache.NewFilteredListWatchFromClient(f.Client.CoreV1().RESTClient(), "serviceaccounts", ns.Name, func(o *metav1.ListOptions) {
			o.FieldSelector = observe.NameSelector("default")
		})
		if _, err := observe.Until(ctx, Timeout.Controller, "the default ServiceAccount of namespace "+ns.Name, lw,
			func(*corev1.ServiceAccount) (bool, error) { return true, nil }, nil); err != nil {
			Unmet(factInfo[ServiceAccounts].component, factInfo[ServiceAccounts].what, err.Error())
		}
		ExpectNoError(usePullSecret(ctx, f.Client, ns.Name), "give namespace %s the registry's credentials", ns.Name)
		// Only once the ServiceAccount exists: Pods wait for it in
		// admission before PodSecurity looks at them.
		f.holdPodSecurity(ctx, ns, level)
	}
	ginkgo.AddReportEntry(OverheadSetup, Millis(time.Since(begin)), ginkgo.ReportEntryVisibilityNever)
}

// deleteNamespace deletes the spec's namespace. It does not wait for it to
// go: the namespace controller starts on a deleted namespace only after a
// fixed 5 s, and then the spec's Pods terminate, which would be most of a
// spec's cost. The suite waits for all of its namespaces at the end (the
// SynchronizedAfterSuite below), so a namespace that never goes still fails
// the run, unless the run removes the cluster next.
func (f *Framework) deleteNamespace(ctx ginkgo.SpecContext, name string) {
	begin := time.Now()
	if ginkgo.CurrentSpecReport().Failed() {
		f.dumpNamespace(ctx)
		if TestContext.KeepNamespacesOnFailure {
			ExpectNoError(f.keepNamespace(ctx), "label the failed spec's namespace kept")
			return
		}
	}
	ExpectNoError(namespace.StartDelete(ctx, f.Client, name), "delete the spec's namespace")
	ginkgo.AddReportEntry(OverheadTeardown, Millis(time.Since(begin)), ginkgo.ReportEntryVisibilityNever)
}

// runID names the run in the label of everything it creates (package
// ownership): Ginkgo gives all parallel processes of a run the same random
// seed.
func runID() string { return strconv.FormatInt(ginkgo.GinkgoRandomSeed(), 10) }

// Own marks obj as this run's (see package ownership). Every object a spec
// creates outside its namespace must carry the mark, so that `kubeproof
// cleanup` can find what an interrupted run left.
func Own[T metav1.Object](obj T) T {
	ownership.Mark(obj, runID())
	return obj
}

// RunLabels are the labels Own adds, for objects made by other packages.
func RunLabels() map[string]string { return ownership.Labels(runID()) }

// After every process is done, the first waits until all of the run's
// namespaces are gone; one that is not fails the suite, named with its
// phase and conditions (its name says which spec made it).
var _ = ginkgo.SynchronizedAfterSuite(func() {}, func(ctx ginkgo.SpecContext) {
	if interrupted.Load() {
		// The specs deleted their namespaces; an interrupted run does not
		// wait for them to go (the cluster is usually removed next).
		return
	}
	if TestContext.ClusterRemovedAfterRun {
		// Every spec deleted its namespace; whether the namespace
		// controller finishes before the cluster is removed proves nothing
		// about the cluster's next user, since there is none.
		ginkgo.GinkgoWriter.Println("the cluster is removed after this run: not waiting for the run's namespaces to go")
		return
	}
	info, err := Cluster()
	if err != nil {
		return // no cluster, so no spec made a namespace
	}
	_, client, err := cluster.NewClient(info.Kubeconfig, info.Context)
	ExpectNoError(err, "load kubeconfig")
	ExpectNoError(namespace.AllGone(ctx, client, ownership.Selector(runID())+",!"+keptLabel, Timeout.NamespaceDelete),
		"the run's namespaces to be deleted")
})

// The harness's own time per spec, in milliseconds, as report entries:
// making the namespace ready for Pods, and deleting it.
const (
	OverheadSetup    = "kubeproof.overhead.setupMs"
	OverheadTeardown = "kubeproof.overhead.teardownMs"
)

// ExpectNoError fails the spec when err is not nil, explaining what was
// being done.
//
// A refusal by PodSecurity admission is told apart: the spec stops as not
// checkable when the cluster enforced a stricter level than the spec needs,
// and fails as a harness bug when kubeproof's request broke the level the
// spec declared (see onPodSecurityRefusal).
func ExpectNoError(err error, what string, args ...any) {
	ginkgo.GinkgoHelper()
	if err != nil {
		onPodSecurityRefusal(err, describe(append([]any{what}, args...)))
	}
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), append([]any{what}, args...)...)
}

// ListSpecs walks the specs registered in this binary without running them.
func ListSpecs() []speclink.SpecInfo {
	report := ginkgo.PreviewSpecs("kubeproof")
	var out []speclink.SpecInfo
	for _, sr := range report.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		s := specInfo(sr.FullText(), sr.Labels())
		s.Source = sourceAt(sr.LeafNodeLocation.FileName, sr.LeafNodeLocation.LineNumber)
		out = append(out, s)
	}
	return out
}

// ClientCertificate issues a client certificate for user in groups through
// the CSR API (the controller manager's signer). A signer that does not
// issue it within its window stops the spec: what needs the identity is
// not checkable.
func (f *Framework) ClientCertificate(ctx context.Context, user string, groups ...string) (certPEM, keyPEM []byte) {
	ginkgo.GinkgoHelper()
	f.NeedsAccess(access.CSRApproval)
	cert, key, err := identity.IssueClientCertificate(ctx, f.Client, user, groups, RunLabels())
	if err != nil {
		if ctx.Err() != nil {
			ginkgo.Fail("interrupted while waiting for a client certificate")
		}
		Unmet("kube-controller-manager", "the CSR API issued a client certificate for "+user+" (csrsigning controller)", err.Error())
	}
	return cert, key
}

// ClientIdentity is a client configuration with a certificate for user in
// groups, issued through the CSR API, that the API server was seen to
// accept (a spec that acts as someone needs that someone to exist). One the
// API server does not authenticate stops the spec.
func (f *Framework) ClientIdentity(ctx context.Context, user string, groups ...string) *rest.Config {
	ginkgo.GinkgoHelper()
	cert, key := f.ClientCertificate(ctx, user, groups...)
	cfg := identity.Certificate(f.RESTConfig, cert, key)
	who, err := identity.WhoAmI(ctx, cfg)
	if err != nil || who.Username != user {
		Unmet("kube-apiserver", "the API server authenticated the client certificate issued for "+user,
			fmt.Sprintf("it answered %q, %v", who.Username, err))
	}
	return cfg
}

// describe renders a description given as gomega takes one: a format and
// its arguments.
func describe(desc []any) string {
	if len(desc) == 0 {
		return ""
	}
	if format, ok := desc[0].(string); ok && len(desc) > 1 {
		return fmt.Sprintf(format, desc[1:]...)
	}
	return fmt.Sprint(desc...)
}
