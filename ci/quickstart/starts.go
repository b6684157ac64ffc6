package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/ci/internal/localcluster"
	"github.com/kubeproof/kubeproof/internal/report"
)

// The local cluster that plays "your cluster": its own name, ports and
// CIDRs.
var clusterFlags = []string{"--apiserver-port", "7843", "--pod-cidr", "10.249.0.0/16", "--service-cidr", "10.105.0.0/16"}

// clusterStart runs the cluster quick start against a local cluster made
// for it, whose kubeconfig is $HOME/.kube/config of a new HOME (kubeproof's
// cache stays the machine's: KUBEPROOF_CACHE_DIR).
func clusterStart(ctx context.Context, b block, bin, dir string) (problems []string) {
	data, down, err := localcluster.Up(ctx, filepath.Join(bin, "kubeproof"), "kpquick", clusterFlags...)
	defer func() {
		if err := down(); err != nil {
			problems = append(problems, err.Error())
		}
	}()
	if err != nil {
		return []string{err.Error()}
	}
	home, _ := filepath.Abs(dir + "-home")
	_ = os.RemoveAll(home)
	err = os.MkdirAll(filepath.Join(home, ".kube"), 0o700)
	if err == nil {
		err = os.WriteFile(filepath.Join(home, ".kube", "config"), data, 0o600)
	}
	if err != nil {
		return []string{"the cluster's kubeconfig: " + err.Error()}
	}
	cache := os.Getenv("KUBEPROOF_CACHE_DIR")
	if cache == "" {
		cache = filepath.Join(os.Getenv("HOME"), ".cache", "kubeproof")
	}
	if err := shell(ctx, b, bin, dir, "HOME="+home, "KUBECONFIG=", "KUBEPROOF_CACHE_DIR="+cache); err != nil {
		return []string{"the quick start failed: " + err.Error()}
	}
	r, err := report.Load(filepath.Join(dir, "report"))
	if err != nil {
		return []string{"its report: " + err.Error()}
	}
	var ran []string
	for _, s := range r.Specs {
		ran = append(ran, s.ID+" "+s.State)
	}
	slices.Sort(ran)
	fmt.Printf("  specs: %v; verdicts: %v\n", ran, r.Summary)
	if !slices.Equal(ran, []string{"apiserver-conflict passed", "apiserver-watch passed"}) {
		return []string{fmt.Sprintf("the specs that ran: %v, want apiserver-conflict and apiserver-watch, passed", ran)}
	}
	if r.Summary["error"] > 0 || r.Summary["confirmed"] == 0 {
		return []string{fmt.Sprintf("verdicts %v: want confirmed claims and no error", r.Summary)}
	}
	return nil
}

// documentStart runs the document quick start in an empty directory: it
// writes a document and its claims file, lints it and runs it on a local
// cluster the run brings up and removes.
func documentStart(ctx context.Context, b block, bin, dir string) []string {
	if err := shell(ctx, b, bin, dir); err != nil {
		return []string{"the quick start failed: " + err.Error()}
	}
	r, err := report.Load(filepath.Join(dir, "report"))
	if err != nil {
		return []string{"its report: " + err.Error()}
	}
	var verdicts []string
	for _, d := range r.Documents {
		for _, c := range d.Claims {
			verdicts = append(verdicts, c.Claim.ID+" "+string(c.Verdict))
		}
	}
	fmt.Printf("  verdicts: %s\n", strings.Join(verdicts, ", "))
	if !slices.Equal(verdicts, []string{"MY-DOC-POD-RUNNING confirmed"}) {
		return []string{fmt.Sprintf("verdicts %v, want MY-DOC-POD-RUNNING confirmed", verdicts)}
	}
	return nil
}
