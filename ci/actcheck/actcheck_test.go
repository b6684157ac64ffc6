package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// What act --json prints is read job by job: a matrix job named with its
// values, its result, the exit code each run step logs, the summary it
// wrote; act's own lines belong to no job.
func TestReadActLines(t *testing.T) {
	r := newRun("matrix", t.TempDir())
	for _, l := range []string{
		`{"level":"info","msg":"Using the only detected workflow event"}`,
		`not JSON at all`,
		`{"job":"suites","matrix":{"provider":"kind","kubernetes":"v1.37.2"},"msg":"kubeproof run exited 13\n"}`,
		`{"job":"suites","matrix":{"provider":"kind","kubernetes":"v1.37.2"},"msg":"  ⚙  Summary - | verdict | claims |"}`,
		`{"job":"suites","matrix":{"provider":"kind","kubernetes":"v1.37.2"},"msg":"kubeproof run exited 0"}`,
		`{"job":"suites","matrix":{"provider":"kind","kubernetes":"v1.37.2"},"msg":"Job failed","jobResult":"failure"}`,
		`{"job":"merge","msg":"Job succeeded","jobResult":"success"}`,
	} {
		r.read([]byte(l))
	}
	const kind = "suites(v1.37.2,kind)"
	if r.jobs[kind] != "failure" || r.jobs["merge"] != "success" || len(r.jobs) != 2 {
		t.Errorf("jobs %v", r.jobs)
	}
	if !slices.Equal(r.exits[kind], []int{13, 0}) || len(r.exits["merge"]) != 0 {
		t.Errorf("exits %v, want [13 0] for %s alone", r.exits, kind)
	}
	if got := r.summary(kind); got != "| verdict | claims |\n" {
		t.Errorf("summary %q", got)
	}
	if !r.logged(kind, "exited 13") || r.logged("merge", "exited") {
		t.Errorf("logged: %v", r.msgs)
	}
}

// The release stand-in is served as made under /good and, with one digit
// of its checksums changed, under /tampered; nothing else changes.
func TestServeReleases(t *testing.T) {
	dir := t.TempDir()
	const version = "v0.1.0"
	sums := "0a1b  kubeproof_v0.1.0_linux_amd64.tar.gz\n"
	for name, body := range map[string]string{"SHA256SUMS": sums, "kubeproof_v0.1.0_linux_amd64.tar.gz": "archive"} {
		if err := os.MkdirAll(filepath.Join(dir, version), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, version, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := serveReleases(dir, version, filepath.Join(t.TempDir(), "served"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(r.url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s", path, resp.Status)
		}
		return string(b)
	}
	if got := get("/good/v0.1.0/SHA256SUMS"); got != sums {
		t.Errorf("good sums %q", got)
	}
	if got := get("/tampered/v0.1.0/SHA256SUMS"); got != "1a1b  kubeproof_v0.1.0_linux_amd64.tar.gz\n" {
		t.Errorf("tampered sums %q, want the first digit flipped", got)
	}
	for _, kind := range []string{"good", "tampered"} {
		if got := get("/" + kind + "/v0.1.0/kubeproof_v0.1.0_linux_amd64.tar.gz"); got != "archive" {
			t.Errorf("%s archive %q", kind, got)
		}
	}
	if !strings.HasPrefix(r.url, "http://127.0.0.1:") {
		t.Errorf("served at %s, want loopback", r.url)
	}
}

// The action act takes for kubeproof/kubeproof is action.yml and action/
// alone; a job inherits no cluster or GitHub file of this process.
func TestActionAndEnv(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "action")
	if err := copyAction("../..", dir); err != nil {
		t.Fatal(err)
	}
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, "action.yml") || !slices.Contains(files, "action/run.sh") || slices.ContainsFunc(files, func(f string) bool {
		return f != "action.yml" && !strings.HasPrefix(f, "action/")
	}) {
		t.Errorf("copied %v, want action.yml and action/ alone", files)
	}
	t.Setenv("KUBECONFIG", "/elsewhere")
	t.Setenv("GITHUB_STEP_SUMMARY", "/tmp/summary")
	t.Setenv("KEPT", "1")
	env := actEnv()
	if slices.ContainsFunc(env, func(kv string) bool {
		return strings.HasPrefix(kv, "KUBECONFIG=") || strings.HasPrefix(kv, "GITHUB_STEP_SUMMARY=")
	}) || !slices.Contains(env, "KEPT=1") {
		t.Errorf("act's environment %v", env)
	}
}
