package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/internal/clusterflags"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/tools/incluster"
)

// inClusterCommand is run's flag set, parsed from args.
func inClusterCommand(t *testing.T, args ...string) (*cobra.Command, *options, *runOptions) {
	t.Helper()
	o, r := &options{}, &runOptions{}
	cmd := &cobra.Command{Use: "run"}
	clusterflags.AddGlobal(cmd.Flags(), o)
	addClusterFlags(cmd, o)
	addRunFlags(cmd, r, "kubeproof-report")
	addInClusterFlags(cmd, r)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return cmd, o, r
}

// The run inside the cluster gets the selection and how the specs run as
// given, the user's files at the paths it reads them from, and a seed that
// names it; what only the run outside reads stays outside.
func TestInClusterArgs(t *testing.T) {
	claimsFile := filepath.Join(t.TempDir(), "claims.yaml")
	if err := os.WriteFile(claimsFile, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, o, r := inClusterCommand(t, "--in-cluster", "--provider", "kubeconfig", "--kubeconfig", "/k", "--disposable",
		"--image-registry", "127.0.0.1:5001/kp", "--insecure-registry", "--claims-file", claimsFile, "--document", "000",
		"--focus", "a,b", "--focus", "c", "--parallel", "4", "--keep", "--report-dir", "out")
	in, err := inClusterArgs(cmd, o, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"run", "--in-cluster-job=" + incluster.JobFile, "--provider=kubeconfig", "--report-dir=" + incluster.ReportDir,
		"--image-registry=127.0.0.1:5001/kp", "--insecure-registry=true", "--claims-file=" + incluster.FilesDir + claimsFile,
		"--document=000", "--focus=a,b", "--focus=c", "--parallel=4", "--ginkgo-arg=seed=" + in.RunID}
	for _, a := range want {
		if !slices.Contains(in.Args, a) {
			t.Errorf("the run inside lacks %s: %q", a, in.Args)
		}
	}
	for _, a := range in.Args {
		for _, outside := range []string{"--kubeconfig", "--keep", "--disposable", "--report-dir=out", "--in-cluster="} {
			if strings.HasPrefix(a, outside) {
				t.Errorf("the run inside gets %s", a)
			}
		}
	}
	if len(in.Files) != 1 || in.Files[0].Path != claimsFile {
		t.Errorf("files carried in: %v, want the claims file", in.Files)
	}
	// A seed the user gave names the run.
	cmd, o, r = inClusterCommand(t, "--in-cluster", "--image-registry", "r/kp", "--ginkgo-arg", "seed=7")
	if in, err := inClusterArgs(cmd, o, r); err != nil || in.RunID != "7" {
		t.Errorf("with seed=7: run ID %q, %v", in.RunID, err)
	}
}

// What the run inside would not honour is refused before anything runs.
func TestInClusterRefuses(t *testing.T) {
	for _, args := range [][]string{
		{"--in-cluster", "--provider", "kubeconfig"},
		{"--in-cluster", "--image-registry", "r/kp", "--keep-namespaces-on-failure"},
		{"--in-cluster", "--image-registry", "r/kp", "--in-cluster-job", "/job.json"},
	} {
		cmd, o, r := inClusterCommand(t, args...)
		if _, err := inClusterArgs(cmd, o, r); exitcode.Of(err) != exitcode.Usage || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v (exit %d), want a one-line usage error", args, err, exitcode.Of(err))
		}
	}
}
