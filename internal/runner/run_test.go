package runner

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision/create"
)

// testProvider is the fake provider of the registry in these tests: it
// makes clusters whose kubeconfig does not exist.
var testProvider = &fakeProvider{}

func init() {
	create.Register(create.Registration{
		Name: "runner-test", Summary: "a fake for the engine's tests", Makes: true,
		New: func(create.Options) (cluster.Provider, error) { return testProvider, nil },
	})
}

// A run that fails after making its cluster (here: its kubeconfig cannot
// be read) still removes it, unless kept, and the failure keeps its exit
// code.
func TestRunRemovesTheClusterItMadeOnFailure(t *testing.T) {
	for _, keep := range []bool{false, true} {
		*testProvider = fakeProvider{kubeconfig: filepath.Join(t.TempDir(), "missing")}
		_, err := Run(context.Background(), Plan{
			Cluster: ClusterOptions{Provider: "runner-test", Name: "t"}, Keep: keep,
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
