package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kubeproof/kubeproof/ci/internal/localcluster"
	kpreport "github.com/kubeproof/kubeproof/internal/report"
)

// The local cluster the cluster checks reach through its kubeconfig: its
// own name, ports and CIDRs, so that it stands beside nothing.
var clusterFlags = []string{"--apiserver-port", "7743", "--pod-cidr", "10.248.0.0/16", "--service-cidr", "10.104.0.0/16"}

// checkCluster runs docs/ci/cluster.yml against a local cluster through its
// kubeconfig, given as the recipe's repository secret.
func checkCluster(ctx context.Context, a actRunner, c *checks, kubeproof, _ string) {
	data, down, err := localcluster.Up(ctx, kubeproof, "kpact", clusterFlags...)
	defer func() {
		derr := down()
		c.expect(derr == nil, "cluster: %v", derr)
	}()
	if !c.ran(err) {
		return
	}
	// The recipe reads the kubeconfig from the secret KUBECONFIG (act
	// --secret-file: a dotenv file, the value quoted with \n escapes).
	secrets := filepath.Join(a.out, "cluster.secrets")
	escaped := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(string(data))
	if err := os.WriteFile(secrets, []byte(`KUBECONFIG="`+escaped+`"`+"\n"), 0o600); !c.ran(err) {
		return
	}
	defer os.Remove(secrets)
	const filter = `--label-filter "spec:apiserver-conflict || spec:apiserver-watch"`
	const claims = `--claims-file ci/act/testdata/refuted.yaml --document ci/act/testdata/concurrency.md`
	for _, tc := range []struct {
		name, args string
		job        string // success or failure
		exit       int
		check      func(*actRun, string, kpreport.Report)
	}{
		{"cluster-filter", filter, "success", 0, func(r *actRun, job string, rep kpreport.Report) {
			var ids []string
			for _, s := range rep.Specs {
				ids = append(ids, s.ID)
			}
			slices.Sort(ids)
			c.expect(slices.Equal(ids, []string{"apiserver-conflict", "apiserver-watch"}), "%s: the specs that ran are %v, want the two the filter names", r.name, ids)
			c.expect(r.logged(job, `--label-filter spec:apiserver-conflict\ \|\|\ spec:apiserver-watch`), "%s: the filter did not reach kubeproof as one argument", r.name)
			sum := r.summary(job)
			c.expect(strings.Contains(sum, "| verdict | claims |") && strings.Contains(sum, "file://"), "%s: the job summary lacks the verdict table or the artifact's link:\n%s", r.name, sum)
			c.expect(len(sum) < 1<<20, "%s: a job summary of %d bytes", r.name, len(sum))
		}},
		{"cluster-refuted", claims, "success", 0, func(r *actRun, _ string, rep kpreport.Report) {
			v := verdicts(rep)
			c.expect(v["ACT-CONFLICT"] == "confirmed" && v["ACT-WINNER-CREATED"] == "refuted", "%s: verdicts %v, want ACT-CONFLICT confirmed, ACT-WINNER-CREATED refuted", r.name, v)
		}},
		{"cluster-fail-on-refuted", claims + " --fail-on-refuted", "failure", 10, nil},
		{"cluster-error", `--claims-file ci/act/testdata/error.yaml --document ci/act/testdata/concurrency.md`, "failure", 13, func(r *actRun, _ string, rep kpreport.Report) {
			v := verdicts(rep)
			c.expect(v["ACT-CHUNKS"] == "error", "%s: verdicts %v, want ACT-CHUNKS error", r.name, v)
		}},
	} {
		r, err := a.run(ctx, tc.name, "docs/ci/cluster.yml", "workflow_dispatch", "--secret-file", secrets, "--input", "args="+tc.args)
		if !c.ran(err) {
			continue
		}
		report(r)
		job := one(c, r, "cluster")
		c.expect(r.jobs[job] == tc.job, "%s: job %s, want %s", tc.name, r.jobs[job], tc.job)
		c.expect(slices.Equal(r.exits[job], []int{tc.exit}), "%s: kubeproof run exited %v, want %d", tc.name, r.exits[job], tc.exit)
		dir, rep := artifact(c, r, "kubeproof-report-cluster-kubeconfig-default-")
		for _, f := range []string{"claims.md", "claims.html", "claims-junit.xml", "junit.xml", "specs.json", "cluster.json"} {
			_, err := os.Stat(filepath.Join(dir, f))
			c.expect(err == nil, "%s: the artifact lacks %s", tc.name, f)
		}
		if tc.check != nil {
			tc.check(r, job, rep)
		}
		fmt.Printf("    reports uploaded as %s: %v\n", filepath.Base(dir), rep.Summary)
	}
}

// checkMatrix runs docs/ci/matrix.yml for one Kubernetes release: the
// recipe's local and kind jobs (one specs each), then the job that joins
// their reports.
func checkMatrix(ctx context.Context, a actRunner, c *checks, _, version string) {
	// GitHub runs each job on a machine of its own; here they share one,
	// and act runs a matrix's jobs at once unless max-parallel says
	// otherwise: the recipe is run as it is but for that one line.
	recipe, err := os.ReadFile(filepath.Join(a.repo, "docs", "ci", "matrix.yml"))
	if !c.ran(err) {
		return
	}
	serial := strings.Replace(string(recipe), "      fail-fast: false\n", "      fail-fast: false\n      max-parallel: 1\n", 1)
	c.expect(serial != string(recipe), "matrix: the recipe has no fail-fast: false line to add max-parallel after")
	workflow := filepath.Join(a.out, "matrix-one-machine.yml")
	if err := os.WriteFile(workflow, []byte(serial), 0o644); !c.ran(err) {
		return
	}
	rel, _ := filepath.Rel(a.repo, workflow)
	r, err := a.run(ctx, "matrix", rel, "workflow_dispatch",
		"--matrix", "kubernetes-version:v1.37.2", "--input", "args=--label-filter spec:apiserver-conflict")
	if !c.ran(err) {
		return
	}
	report(r)
	suites := jobsLike(r, "suites")
	c.expect(len(suites) == 2, "matrix: %d suite jobs (%v), want local and kind", len(suites), suites)
	for _, j := range suites {
		c.expect(r.jobs[j] == "success" && slices.Equal(r.exits[j], []int{0}), "matrix: job %s %s, kubeproof run exited %v", j, r.jobs[j], r.exits[j])
	}
	merge := one(c, r, "merge")
	c.expect(r.jobs[merge] == "success", "matrix: the merge job %s", r.jobs[merge])
	for _, p := range []string{"local", "kind"} {
		_, rep := artifact(c, r, "kubeproof-report-suites-"+p+"-v1.37.2-")
		c.expect(len(rep.Specs) == 1, "matrix: the %s job's report has %d specs, want 1", p, len(rep.Specs))
	}
	md, err := os.ReadFile(filepath.Join(r.stubDir, "artifacts", "kubeproof-matrix", "matrix.md"))
	c.expect(err == nil, "matrix: no merged page: %v", err)
	for _, p := range []string{"local", "kind"} {
		c.expect(strings.Contains(string(md), p), "matrix: the merged page does not name the %s run", p)
	}
	cache := strings.Join(lines(filepath.Join(r.stubDir, "cache.log")), "\n")
	for _, p := range []string{"local", "kind"} {
		key := "kubeproof-Linux-X64-" + p + "-k8s-v1.37.2-" + version
		c.expect(strings.Contains(cache, "restore key="+key) && strings.Contains(cache, "save key="+key),
			"matrix: the cache was not restored and saved under %s:\n%s", key, cache)
	}
	c.expect(len(lines(filepath.Join(r.stubDir, "junit.log"))) == 2, "matrix: the claims were not published as test results twice")
	fmt.Printf("    merged page: %d bytes, %d lines\n", len(md), strings.Count(string(md), "\n"))
}
