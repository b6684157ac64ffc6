package runner

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision"
)

// testProvider is the fake provider in these tests: it makes clusters
// whose kubeconfig does not exist. The engine gets it for a request of
// the local provider (one that makes clusters).
var testProvider = &fakeProvider{}

func init() {
	newProvider = func(context.Context, provision.Request, *progress.Printer) (cluster.Provider, error) {
		return testProvider, nil
	}
}

// A run that fails after making its cluster (here: its kubeconfig cannot
// be read) still removes it, unless kept, and the failure keeps its exit
// code.
func TestRunRemovesTheClusterItMadeOnFailure(t *testing.T) {
	for _, keep := range []bool{false, true} {
		*testProvider = fakeProvider{kubeconfig: filepath.Join(t.TempDir(), "missing")}
		_, err := Run(context.Background(), Plan{
			Cluster: provision.Request{Provider: "local", Options: provision.Options{Shape: provision.Shape{Name: "t"}}}, Keep: keep,
			Filter: NoSpecs, ReportDir: t.TempDir(),
		})
		if code := exitcode.Of(err); code != exitcode.Kubeconfig {
			t.Errorf("keep %t: err = %v (exit code %d), want exit code %d", keep, err, code, exitcode.Kubeconfig)
		}
		wantDowns := 1
		if keep {
			wantDowns = 0
		}
		if testProvider.ups != 1 || testProvider.downs != wantDowns {
			t.Errorf("keep %t: ups %d, downs %d; want 1, %d", keep, testProvider.ups, testProvider.downs, wantDowns)
		}
	}
}
