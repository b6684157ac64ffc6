package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	kpreport "github.com/kubeproof/kubeproof/internal/report"
)

// jobsLike are the jobs of r whose name (workflow/job, and its matrix)
// contains s.
func jobsLike(r *actRun, s string) []string {
	var out []string
	for j := range r.jobs {
		if strings.Contains(j, s) {
			out = append(out, j)
		}
	}
	return out
}

// one is the one job of r named like s ("" when there is not exactly one).
func one(c *checks, r *actRun, s string) string {
	js := jobsLike(r, s)
	c.expect(len(js) == 1, "%s: %d jobs named like %q (%v), want 1", r.name, len(js), s, r.jobs)
	if len(js) != 1 {
		return ""
	}
	return js[0]
}

// headCommit is this checkout's commit as `kubeproof version` shows it
// (its first 12 hex digits).
func headCommit() string {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))[:12]
}

// checkLint: a documentation repository's lint job installs the release
// the action is pinned at and lints; a broken claims file fails the job
// with lint's own exit code.
func checkLint(ctx context.Context, a actRunner, c *checks, _, version string) {
	r, err := a.run(ctx, "lint", "docs/ci/docs-lint.yml", "workflow_dispatch")
	if c.ran(err) {
		report(r)
		job := one(c, r, "lint")
		c.expect(r.jobs[job] == "success", "lint: job %s", r.jobs[job])
		c.expect(r.logged(job, "kubeproof: downloading "), "lint: the action did not download the release")
		c.expect(r.logged(job, "kubeproof "+version+" (commit "+headCommit()), "lint: the installed kubeproof is not %s of this checkout", version)
		c.expect(r.logged(job, "claims, no problems"), "lint: claims lint did not pass the worked example")
	}
	r, err = a.run(ctx, "lint-broken", "docs/ci/docs-lint.yml", "workflow_dispatch",
		"--input", "claims=ci/act/testdata/broken.yaml", "--input", "document=ci/act/testdata/concurrency.md")
	if c.ran(err) {
		report(r)
		job := one(c, r, "lint")
		c.expect(r.jobs[job] == "failure" && r.code != 0, "lint-broken: job %s, act exit %d, want a failed job", r.jobs[job], r.code)
		c.expect(r.logged(job, "exit status 14"), "lint-broken: the lint step did not exit 14 (claims file problems)")
		c.expect(r.logged(job, "2 problems"), "lint-broken: lint did not name 2 problems")
	}
}

// checkSource: the action used from a checkout builds it with Go.
func checkSource(ctx context.Context, a actRunner, c *checks, _, _ string) {
	r, err := a.run(ctx, "source", "ci/act/source.yml", "workflow_dispatch")
	if c.ran(err) {
		report(r)
		job := one(c, r, "source")
		c.expect(r.jobs[job] == "success", "source: job %s", r.jobs[job])
		c.expect(r.logged(job, "kubeproof: building the action's checkout"), "source: the action did not build its checkout")
		c.expect(r.logged(job, "commit "+headCommit()), "source: the built kubeproof is not of this commit")
		c.expect(r.logged(job, "claims, no problems"), "source: claims lint did not pass")
	}
}

func (c *checks) ran(err error) bool {
	c.expect(err == nil, "act: %v", err)
	return err == nil
}

// verdicts are the claims' verdicts of a report, by claim ID.
func verdicts(r kpreport.Report) map[string]string {
	out := map[string]string{}
	for _, d := range r.Documents {
		for _, cl := range d.Claims {
			out[cl.Claim.ID] = string(cl.Verdict)
		}
	}
	return out
}

// artifact reads claims.json of the one artifact of r named like prefix*.
func artifact(c *checks, r *actRun, prefix string) (string, kpreport.Report) {
	dirs, _ := filepath.Glob(filepath.Join(r.stubDir, "artifacts", prefix+"*"))
	c.expect(len(dirs) == 1, "%s: %d artifacts named %s*, want 1", r.name, len(dirs), prefix)
	if len(dirs) != 1 {
		return "", kpreport.Report{}
	}
	rep, err := kpreport.Load(dirs[0])
	c.expect(err == nil, "%s: artifact %s: %v", r.name, filepath.Base(dirs[0]), err)
	return dirs[0], rep
}

// lines are the lines of the file at path.
func lines(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// checkInstall runs the action's install step as the runner runs it for
// an action pinned at a release (uses: kubeproof/kubeproof@VERSION): its
// path .../_actions/kubeproof/kubeproof/VERSION, github.action_ref and
// action_repository left empty, as a composite action may see them. Then
// from a release whose SHA256SUMS does not match its archive.
func checkInstall(url string) func(context.Context, actRunner, *checks, string, string) {
	return func(ctx context.Context, a actRunner, c *checks, _, version string) {
		for _, tc := range []struct {
			name, release string
			ok            bool
		}{{"install", url + "/good", true}, {"install-tampered", url + "/tampered", false}} {
			dir := filepath.Join(a.out, tc.name)
			_ = os.RemoveAll(dir)
			actionPath := filepath.Join(dir, "runner", "_actions", "kubeproof", "kubeproof", version)
			if err := os.MkdirAll(filepath.Dir(actionPath), 0o755); err != nil {
				c.expect(false, "%s: %v", tc.name, err)
				return
			}
			_ = os.Symlink(a.repo, actionPath)
			tmp := filepath.Join(dir, "tmp")
			_ = os.MkdirAll(tmp, 0o755)
			cmd := exec.CommandContext(ctx, filepath.Join(a.repo, "action", "install.sh"))
			cmd.Env = append(actEnv(), "GITHUB_ACTION_PATH="+actionPath, "GITHUB_PATH="+filepath.Join(dir, "path"),
				"GITHUB_OUTPUT="+filepath.Join(dir, "output"), "RUNNER_TEMP="+tmp, "KUBEPROOF_RELEASE_URL="+tc.release,
				"ACTION_REF=", "ACTION_REPO=", "KP_VERSION=")
			out, err := cmd.CombinedOutput()
			_ = os.WriteFile(filepath.Join(dir, "install.log"), out, 0o644)
			fmt.Printf("  %s (action path .../_actions/kubeproof/kubeproof/%s, %s): %v\n%s", tc.name, version, tc.release, err, indent(string(out)))
			if !tc.ok {
				c.expect(err != nil && strings.Contains(string(out), "FAILED"), "%s: a release whose checksum does not match was installed", tc.name)
				c.expect(len(lines(filepath.Join(dir, "path"))) == 0, "%s: PATH got a kubeproof all the same", tc.name)
				continue
			}
			c.expect(err == nil, "%s: %v", tc.name, err)
			path := lines(filepath.Join(dir, "path"))
			c.expect(len(path) == 1, "%s: GITHUB_PATH has %v", tc.name, path)
			if len(path) == 1 {
				got, err := exec.Command(filepath.Join(path[0], "kubeproof"), "version").Output()
				c.expect(err == nil && strings.HasPrefix(string(got), "kubeproof "+version+" "), "%s: the kubeproof on PATH says %q (%v)", tc.name, got, err)
			}
		}
	}
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}
