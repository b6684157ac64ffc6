package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// actRunner runs nektos/act on this machine's own shell (its self-hosted
// platform, no Docker) with nothing leaving the machine: no version notice
// (ACT_DISABLE_VERSION_CHECK), its cache and artifact servers on loopback,
// the remote actions the workflows name replaced by this project's
// stand-ins (ci/act/stubs) and kubeproof/kubeproof@VERSION by this
// checkout.
type actRunner struct {
	act  string
	repo string // the checkout act copies into each job's workspace
	// action is the action's files alone (action.yml, action/), which act
	// takes for kubeproof/kubeproof@VERSION: act reads a local repository
	// whole into memory, and the checkout's _output holds gigabytes.
	action  string
	version string // the release the recipes pin kubeproof's action at
	release string // KUBEPROOF_RELEASE_URL: the stand-in of the releases
	out     string // where each run's log and stand-in records go
}

// actRun is what one act run did.
type actRun struct {
	name    string
	took    time.Duration
	code    int                 // act's own exit code: 1 when a job failed
	jobs    map[string]string   // job (with its matrix) -> success or failure
	exits   map[string][]int    // job -> "kubeproof run exited N" of each run step
	msgs    map[string][]string // job -> every message it logged
	stubDir string              // $ACT_STUB_DIR: what the stand-ins recorded
}

func newRun(name, stubDir string) *actRun {
	return &actRun{name: name, jobs: map[string]string{}, exits: map[string][]int{}, msgs: map[string][]string{}, stubDir: stubDir}
}

// actLine is one line of act --json.
type actLine struct {
	Job       string         `json:"job"`
	Matrix    map[string]any `json:"matrix"`
	Msg       string         `json:"msg"`
	JobResult string         `json:"jobResult"`
}

var runExited = regexp.MustCompile(`kubeproof run exited (\d+)`)

// run runs the workflow file (relative to the checkout) for event with
// the extra act flags, and reads what its jobs did.
func (a actRunner) run(ctx context.Context, name, workflow, event string, extra ...string) (*actRun, error) {
	dir := filepath.Join(a.out, name)
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	stub := filepath.Join(dir, "stub")
	if err := os.MkdirAll(stub, 0o755); err != nil {
		return nil, err
	}
	stubs := filepath.Join(a.repo, "ci", "act", "stubs")
	args := []string{event, "-C", a.repo, "-W", workflow, "--json",
		"-P", "ubuntu-latest=-self-hosted", "-P", "ubuntu-24.04=-self-hosted",
		// act's workspaces and servers in this run's directory, on loopback.
		"--action-cache-path", filepath.Join(dir, "act"),
		"--cache-server-addr", "127.0.0.1", "--cache-server-path", filepath.Join(dir, "cache-server"),
		"--artifact-server-addr", "127.0.0.1",
		// Matrix jobs one after another: here they share one machine.
		"--concurrent-jobs", "1",
		"--local-repository", "kubeproof/kubeproof@" + a.version + "=" + a.action,
		"--local-repository", "actions/upload-artifact@v4=" + filepath.Join(stubs, "upload-artifact"),
		"--local-repository", "actions/download-artifact@v4=" + filepath.Join(stubs, "download-artifact"),
		"--local-repository", "actions/cache@v4=" + filepath.Join(stubs, "cache"),
		"--local-repository", "actions/setup-go@v5=" + filepath.Join(stubs, "setup-go"),
		"--local-repository", "mikepenz/action-junit-report@v5=" + filepath.Join(stubs, "action-junit-report"),
		"--env", "ACT_STUB_DIR=" + stub, "--env", "KUBEPROOF_RELEASE_URL=" + a.release,
	}
	args = append(args, extra...)
	cmd := exec.CommandContext(ctx, a.act, args...)
	cmd.Env = append(actEnv(), "ACT_DISABLE_VERSION_CHECK=1")
	log, err := os.Create(filepath.Join(dir, "act.jsonl"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = log
	r := newRun(name, stub)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start act: %w", err)
	}
	text, err := os.Create(filepath.Join(dir, "act.log"))
	if err != nil {
		return nil, err
	}
	defer text.Close()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		fmt.Fprintln(log, sc.Text())
		if job, msg, ok := r.read(sc.Bytes()); ok {
			fmt.Fprintf(text, "[%s] %s\n", job, msg)
		}
	}
	err = cmd.Wait()
	r.took = time.Since(start)
	if ee, ok := err.(*exec.ExitError); ok {
		r.code, err = ee.ExitCode(), nil
	}
	return r, err
}

// read takes in a line of act --json: a job's message (ok), with the
// job's result when it ends and the exit code its run step logs; other
// lines (act's own) are not a job's.
func (r *actRun) read(line []byte) (job, msg string, ok bool) {
	var l actLine
	if json.Unmarshal(line, &l) != nil || l.Job == "" {
		return "", "", false
	}
	job = jobName(l)
	msg = strings.TrimRight(l.Msg, "\n")
	r.msgs[job] = append(r.msgs[job], msg)
	if l.JobResult != "" {
		r.jobs[job] = l.JobResult
	}
	if m := runExited.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1]) // \d+
		r.exits[job] = append(r.exits[job], n)
	}
	return job, msg, true
}

// jobName is a job's name with its matrix values: suites(kind,v1.37.2).
func jobName(l actLine) string {
	if len(l.Matrix) == 0 {
		return l.Job
	}
	var vals []string
	for _, k := range slices.Sorted(mapKeys(l.Matrix)) {
		vals = append(vals, fmt.Sprint(l.Matrix[k]))
	}
	return l.Job + "(" + strings.Join(vals, ",") + ")"
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// actEnv is the environment act runs with: this process's, less what would
// point a job at another cluster or Docker than the one it is given (act's
// self-hosted jobs inherit it).
func actEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "KUBECONFIG", "KUBEPROOF_CLUSTER_INFO", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// logged says whether a message of job contains s.
func (r *actRun) logged(job, s string) bool {
	return slices.ContainsFunc(r.msgs[job], func(m string) bool { return strings.Contains(m, s) })
}

// summary is what a job wrote to its job summary, as act logs it.
func (r *actRun) summary(job string) string {
	var b strings.Builder
	for _, m := range r.msgs[job] {
		if _, s, ok := strings.Cut(m, "Summary - "); ok {
			b.WriteString(s + "\n")
		}
	}
	return b.String()
}

// copyAction copies the action's own files (action.yml and action/) from
// the checkout repo into dir, afresh.
func copyAction(repo, dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	err := filepath.WalkDir(filepath.Join(repo, "action"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repo, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		return copyFile(path, filepath.Join(dir, rel))
	})
	if err != nil {
		return err
	}
	return copyFile(filepath.Join(repo, "action.yml"), filepath.Join(dir, "action.yml"))
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	fi, err := os.Stat(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, data, fi.Mode().Perm())
}
