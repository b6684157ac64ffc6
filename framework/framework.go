// Package framework is what kubeproof's suites stand on: the cluster under
// test, one fresh namespace per spec with its cleanup, the real kubectl,
// capability checks, and evidence recorded for the claims report.
//
// Suites are ordinary Go packages that declare Ginkgo specs. They run from
// the kubeproof binary (`kubeproof run`) or from `go test`; both pass the
// cluster with the flags RegisterFlags adds.
package framework

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"sync"
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

	"github.com/kubeproof/kubeproof/framework/access"
	"github.com/kubeproof/kubeproof/framework/claims"
	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/framework/identity"
	"github.com/kubeproof/kubeproof/framework/images"
	"github.com/kubeproof/kubeproof/framework/kubectl"
	"github.com/kubeproof/kubeproof/framework/namespace"
	"github.com/kubeproof/kubeproof/framework/observe"
	"github.com/kubeproof/kubeproof/framework/ownership"
	"github.com/kubeproof/kubeproof/framework/podsecurity"
	"github.com/kubeproof/kubeproof/internal/buildinfo"
)

// TestContext holds the flags that say which cluster the suites check.
var TestContext struct {
	// ClusterInfo is a cluster info file written by a provider.
	ClusterInfo string
	// Kubeconfig is used when no ClusterInfo is given: any cluster, with no
	// capabilities beyond the API.
	Kubeconfig string
	Context    string
	// TimeoutScale multiplies every timeout and window (Timeouts).
	TimeoutScale float64
	// InjectFault names a fault of the harness's own making, for
	// kubeproof's fault matrix (see InjectedFault).
	InjectFault string
	// ImageRegistry is where the run's Pods take kubeproof's images from,
	// when its nodes do not have them loaded.
	ImageRegistry string
	// ImageTag is the images' tag in ImageRegistry (default: this
	// binary's version, as `kubeproof image push` tags them).
	ImageTag string
	// ImagePullSecret is a docker config file with the credentials for
	// ImageRegistry.
	ImagePullSecret string
	// ReportDir is where a failed spec's namespace dump goes (failures/).
	ReportDir string
	// KeepNamespacesOnFailure keeps a failed spec's namespace (labelled
	// kubeproof.io/kept) instead of deleting it.
	KeepNamespacesOnFailure bool
	// ClusterRemovedAfterRun: the run removes the cluster when it ends
	// (it brought it up, without --keep), so the suite's end does not wait
	// for the run's namespaces to be gone.
	ClusterRemovedAfterRun bool
	// ClaimsFiles are users' claims files whose probes this process runs
	// as specs (absolute paths).
	ClaimsFiles []string
}

// Faults the harness can inject into what it deploys itself.
const (
	// FaultWebhookServerDown: kubeproof's webhook server never answers.
	FaultWebhookServerDown = "webhook-server-down"
)

// InjectedFault reports whether the run injects fault.
func InjectedFault(fault string) bool { return TestContext.InjectFault == fault }

// RegisterFlags adds the suites' flags to fs (flag.CommandLine for go test
// and for the kubeproof binary's spec runner).
func RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&TestContext.ClusterInfo, "kubeproof.cluster-info", os.Getenv("KUBEPROOF_CLUSTER_INFO"),
		"cluster info file written by `kubeproof up` (default $KUBEPROOF_CLUSTER_INFO)")
	fs.StringVar(&TestContext.Kubeconfig, "kubeproof.kubeconfig", os.Getenv("KUBECONFIG"),
		"kubeconfig of a cluster to check when no cluster info is given (default $KUBECONFIG)")
	fs.StringVar(&TestContext.Context, "kubeproof.context", "", "kubeconfig context")
	fs.Float64Var(&TestContext.TimeoutScale, "kubeproof.timeout-scale", 1,
		"multiply every timeout and observation window by this (for slow machines)")
	fs.StringVar(&TestContext.ImageRegistry, "kubeproof.image-registry", "",
		"registry the Pods take kubeproof's images from (where `kubeproof image push` put them), for nodes that do not have them loaded")
	fs.StringVar(&TestContext.ImageTag, "kubeproof.image-tag", "",
		"the images' tag in --kubeproof.image-registry (default: this binary's version, as `kubeproof image push` tags them)")
	fs.StringVar(&TestContext.ImagePullSecret, "kubeproof.image-pull-secret", "",
		"docker config file with the credentials for --kubeproof.image-registry")
	fs.StringVar(&TestContext.ReportDir, "kubeproof.report-dir", ".", "directory for failed specs' namespace dumps (failures/)")
	fs.BoolVar(&TestContext.KeepNamespacesOnFailure, "kubeproof.keep-namespaces-on-failure", false,
		"keep a failed spec's namespace, labelled kubeproof.io/kept, instead of deleting it")
	fs.BoolVar(&TestContext.ClusterRemovedAfterRun, "kubeproof.cluster-removed-after-run", false,
		"the cluster is removed when the run ends: the suite does not wait for its namespaces to go")
	fs.Func("kubeproof.claims-file", "a claims file whose probes run as specs (repeatable)", func(v string) error {
		TestContext.ClaimsFiles = append(TestContext.ClaimsFiles, v)
		return nil
	})
	fs.StringVar(&TestContext.InjectFault, "kubeproof.inject-fault", "",
		"inject a fault of the harness's own making (kubeproof's fault matrix): "+FaultWebhookServerDown)
}

// applyScale sets Timeout from the flags.
func applyScale() {
	if TestContext.TimeoutScale > 0 {
		Timeout = DefaultTimeouts().Scaled(TestContext.TimeoutScale)
	}
}

var (
	clusterOnce sync.Once
	clusterInfo *cluster.Info
	clusterErr  error
)

// Cluster returns the cluster under test, loaded once per process.
func Cluster() (*cluster.Info, error) {
	clusterOnce.Do(func() {
		applyScale()
		switch {
		case TestContext.ClusterInfo != "":
			clusterInfo, clusterErr = cluster.Load(TestContext.ClusterInfo)
		case TestContext.Kubeconfig != "":
			// The kubeconfig provider knows what a bare kubeconfig cannot do.
			clusterInfo, clusterErr = kubeconfigInfo(TestContext.Kubeconfig, TestContext.Context)
		default:
			clusterErr = fmt.Errorf("no cluster to check: pass --kubeproof.cluster-info (written by `kubeproof up`) or --kubeproof.kubeconfig")
		}
		if clusterErr == nil {
			if TestContext.ImageRegistry != "" {
				images.UseRegistry(TestContext.ImageRegistry, cmp.Or(TestContext.ImageTag, buildinfo.ImageTag()))
			} else {
				images.UseRegistry(clusterInfo.ImageRegistry, cmp.Or(clusterInfo.ImageTag, buildinfo.ImageTag()))
			}
		}
	})
	return clusterInfo, clusterErr
}

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

// FailFirstAttemptEnv names a spec (by its ID) whose first attempt fails on
// purpose: a test of --flake-attempts, which must report the spec as flaky.
const FailFirstAttemptEnv = "KUBEPROOF_FAIL_FIRST_ATTEMPT"

func failFirstAttempt() {
	id := os.Getenv(FailFirstAttemptEnv)
	if id == "" || ginkgo.CurrentSpecReport().NumAttempts > 1 {
		return
	}
	if slices.Contains(ginkgo.CurrentSpecReport().Labels(), claims.SpecLabelPrefix+id) {
		ginkgo.Fail("the first attempt fails on purpose (" + FailFirstAttemptEnv + "=" + id + ")")
	}
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

// Require skips the spec when the cluster lacks capability c, saying why.
func (f *Framework) Require(c cluster.Capability) {
	if !f.Cluster.Has(c) {
		ginkgo.Skip(f.Cluster.Missing(c))
	}
}

// Disturbs declares that the spec does what other users of the cluster
// would notice (what: "adds simulated Nodes"). On a cluster that is not
// Disposable the spec is skipped, its claims not checkable, saying why.
func (f *Framework) Disturbs(what string) {
	if !f.Cluster.Has(cluster.Disposable) {
		ginkgo.Skip("the spec " + what + ", which would disturb other users of the cluster: " + f.Cluster.Missing(cluster.Disposable))
	}
}

// kubeconfigInfo is the info of the cluster a kubeconfig reaches, as the
// kubeconfig provider describes it (with what a bare kubeconfig cannot do).
func kubeconfigInfo(path, kubeContext string) (*cluster.Info, error) {
	p, err := cluster.Open(&cluster.Info{Provider: "kubeconfig", Kubeconfig: path, Context: kubeContext})
	if err != nil {
		return nil, err
	}
	return p.Info(context.Background())
}

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
func ListSpecs() []claims.SpecInfo {
	report := ginkgo.PreviewSpecs("kubeproof")
	var out []claims.SpecInfo
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
