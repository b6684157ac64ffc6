//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	judgement "github.com/kubeproof/kubeproof/internal/judge"
	"github.com/kubeproof/kubeproof/internal/report"
)

func reportIn(t *testing.T, r report.Report) string {
	t.Helper()
	dir := t.TempDir()
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "claims.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The guest's command is judged by the report it left: a failed spec or a
// partial report fails whatever the command's exit code; a clean report
// passes on the command's code; no report is a setup error.
func TestJudge(t *testing.T) {
	passed := judgement.SpecResult{ID: "podflow-create", State: "passed"}
	failed := judgement.SpecResult{ID: "kubelet-cgroups", State: "failed"}
	for name, c := range map[string]struct {
		dir  string
		code int
		want exitcode.Code
	}{
		"clean":         {reportIn(t, report.Report{Specs: []judgement.SpecResult{passed}}), 0, exitcode.OK},
		"a failed spec": {reportIn(t, report.Report{Specs: []judgement.SpecResult{passed, failed}}), 0, exitcode.SpecsFailed},
		"partial":       {reportIn(t, report.Report{Specs: []judgement.SpecResult{passed}, Partial: "interrupted"}), 0, exitcode.SpecsFailed},
		"command code":  {reportIn(t, report.Report{Specs: []judgement.SpecResult{passed}}), 3, exitcode.Code(3)},
		"no report":     {t.TempDir(), 0, exitcode.ClusterSetup},
	} {
		if got := judge(c.dir, c.code, time.Second); got != c.want {
			t.Errorf("%s: %s, want %s", name, got, c.want)
		}
	}
}
