package framework

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/onsi/ginkgo/v2"

	"github.com/kubeproof/kubeproof/claims/speclink"
	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/contract/images"
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

// FailFirstAttemptEnv names a spec (by its ID) whose first attempt fails on
// purpose: a test of --flake-attempts, which must report the spec as flaky.
const FailFirstAttemptEnv = "KUBEPROOF_FAIL_FIRST_ATTEMPT"

func failFirstAttempt() {
	id := os.Getenv(FailFirstAttemptEnv)
	if id == "" || ginkgo.CurrentSpecReport().NumAttempts > 1 {
		return
	}
	if slices.Contains(ginkgo.CurrentSpecReport().Labels(), speclink.SpecLabelPrefix+id) {
		ginkgo.Fail("the first attempt fails on purpose (" + FailFirstAttemptEnv + "=" + id + ")")
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

// Faults the harness can inject into what it deploys itself.
const (
	// FaultWebhookServerDown: kubeproof's webhook server never answers.
	FaultWebhookServerDown = "webhook-server-down"
)

var (
	clusterOnce sync.Once
	clusterInfo *cluster.Info
	clusterErr  error
)
