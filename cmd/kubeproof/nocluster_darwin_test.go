package main

// On darwin (a Mac, where most operators' laptops are), the commands that
// need no cluster work as they do on Linux, and the providers that need
// Linux refuse in one line. Built and vetted on Linux by `make lint`
// (GOOS=darwin go vet ./...); run by `go test ./cmd/kubeproof` on a Mac.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/runner"
)

func TestNoClusterCommandsOnDarwin(t *testing.T) {
	if code, out := runOut(t, "version"); code != exitcode.OK {
		t.Errorf("version: exit %d", code)
	} else if !strings.Contains(versionLine(), "darwin/") {
		t.Errorf("version: %q names no darwin platform (%s)", versionLine(), out)
	}
	file := filepath.Join(t.TempDir(), "doc.yaml")
	// A report directory as a run leaves it: judged again from its spec
	// report and cluster info.
	report := reportDir(t)
	for _, args := range [][]string{
		{"claims", "list"},
		{"claims", "lint", "../../docs/examples/pod-lifecycle/claims.yaml", "--document", "../../docs/examples/pod-lifecycle/document.md"},
		{"claims", "new", file, "--document", "doc.md", "--title", "Doc"},
		{"claims", "specs"},
		{"report", "--report-dir", report, "--claims", "000-KUBECTL-HTTP"},
	} {
		if code, _ := runOut(t, args...); code != exitcode.OK {
			t.Errorf("%v: exit %d", args, code)
		}
	}
	for _, name := range []string{"claims.md", "claims.html", "claims-junit.xml"} {
		if _, err := os.Stat(filepath.Join(report, name)); err != nil {
			t.Errorf("report wrote no %s: %v", name, err)
		}
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("claims new wrote nothing: %v", err)
	}
	for _, provider := range []string{"local", "kind"} {
		root := newRootCommand()
		root.SetArgs([]string{"run", "--provider", provider, "--report-dir", t.TempDir()})
		err := root.Execute()
		if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "needs Linux, not darwin") || strings.Contains(err.Error(), "\n") {
			t.Errorf("run --provider %s on darwin: %v", provider, err)
		}
	}
}

// reportDir is a run's report directory: its cluster info and the spec
// report of one spec that passed.
func reportDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	info := &cluster.Info{Provider: "kubeconfig", Name: "laptop"}
	if err := info.Save(filepath.Join(dir, "cluster.json")); err != nil {
		t.Fatal(err)
	}
	passed := types.SpecReport{ContainerHierarchyTexts: []string{"Pod creation flow"}, LeafNodeType: types.NodeTypeIt, LeafNodeText: "kubectl apply -f pod.yaml",
		LeafNodeLabels: []string{"spec:podflow-create", "claim:000-KUBECTL-HTTP"}, State: types.SpecStatePassed, NumAttempts: 1}
	specs, err := json.Marshal([]types.Report{{SuiteDescription: "kubeproof", SpecReports: types.SpecReports{passed}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, runner.SpecsReportName), specs, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
