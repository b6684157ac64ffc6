// Command actcheck runs kubeproof's GitHub Action (action.yml) and the
// recipes of docs/ci with nektos/act on this machine, as a job on GitHub's
// runners would run them, and checks what each job did (make action, part
// of make test):
//
//   - lint: docs/ci/docs-lint.yml, the action pinned at a release
//     (install-only), claims lint of the worked example; again with a broken
//     claims file, which fails the job with lint's exit code (14);
//   - source: ci/act/source.yml, the action from a checkout (uses: ./),
//     which builds kubeproof with Go;
//   - install: the action's install step pinned at a release through its own
//     path (the runner's _actions/OWNER/REPO/REF), and with a release whose
//     checksum does not match, which it refuses;
//   - cluster: docs/ci/cluster.yml against a local cluster through its
//     kubeconfig (a repository secret), with a quoted label filter
//     ("spec:a || spec:b"), a claims file with a refuted claim (the job
//     passes; with --fail-on-refuted it fails with 10) and one with a claim
//     in error (the job fails with 13);
//   - matrix: docs/ci/matrix.yml for one Kubernetes release, a job on a
//     local cluster and one on kind, each uploading its reports, and the
//     last job's merged page of both.
//
// The release the recipes pin (kubeproof/kubeproof@VERSION) is this checkout
// (act --local-repository), its release archive a stand-in: this checkout
// built as VERSION and packed as a release packs it (make action), served on
// 127.0.0.1. Remote actions are the
// stand-ins of ci/act/stubs. Each act run's log is kept in OUT/<run>.
//
//	actcheck --act BIN --kubeproof BIN --release DIR [--version v0.1.0] [--out DIR] [--only a,b]
//
// Exit codes: 0 every check held, 1 one did not, 2 usage.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() { os.Exit(run()) }

// checks collects what did not hold.
type checks struct{ problems []string }

func (c *checks) expect(ok bool, format string, args ...any) {
	if !ok {
		p := fmt.Sprintf(format, args...)
		c.problems = append(c.problems, p)
		fmt.Printf("  PROBLEM %s\n", p)
	}
}

func run() int {
	fs := flag.NewFlagSet("actcheck", flag.ContinueOnError)
	act := fs.String("act", "_output/tools/act", "nektos/act")
	kubeproof := fs.String("kubeproof", "_output/bin/kubeproof", "the kubeproof of this checkout (brings the cluster of the cluster checks up and down)")
	release := fs.String("release", "", "a directory holding VERSION/: the release archive and its SHA256SUMS")
	version := fs.String("version", "v0.1.0", "the release the recipes pin the action at")
	out := fs.String("out", "_output/action", "where each act run's log and records go")
	only := fs.String("only", "", "run only these checks (comma-separated: lint, source, install, cluster, matrix)")
	if err := fs.Parse(os.Args[1:]); err != nil || *release == "" || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: actcheck --act BIN --kubeproof BIN --release DIR [--version V] [--out DIR] [--only a,b]")
		return 2
	}
	repo, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "actcheck:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	releases, err := serveReleases(abs(*release), *version, filepath.Join(abs(*out), "releases"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "actcheck:", err)
		return 1
	}
	defer releases.close()
	a := actRunner{act: abs(*act), repo: repo, action: filepath.Join(abs(*out), "action"), version: *version, release: releases.url + "/good", out: abs(*out)}
	if err := copyAction(repo, a.action); err != nil {
		fmt.Fprintln(os.Stderr, "actcheck: copy the action:", err)
		return 1
	}
	c := &checks{}
	all := []struct {
		name string
		do   func(context.Context, actRunner, *checks, string, string)
	}{
		{"lint", checkLint}, {"source", checkSource}, {"install", checkInstall(releases.url)},
		{"cluster", checkCluster}, {"matrix", checkMatrix},
	}
	for _, check := range all {
		if *only != "" && !slices.Contains(strings.Split(*only, ","), check.name) {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		fmt.Printf("\n== %s\n", check.name)
		check.do(ctx, a, c, abs(*kubeproof), *version)
	}
	if ctx.Err() != nil {
		fmt.Println("actcheck: interrupted")
		return 130
	}
	if len(c.problems) > 0 {
		fmt.Printf("\nactcheck: %d checks did not hold (PROBLEM above); act's logs are in %s\n", len(c.problems), *out)
		return 1
	}
	fmt.Printf("\nactcheck: every check held; act's logs are in %s\n", *out)
	return 0
}

// releases serves the release stand-in on loopback: /good/VERSION/ as made,
// /tampered/VERSION/ with one digit of its checksums changed.
type releases struct {
	url    string
	server *http.Server
}

func serveReleases(dir, version, root string) (*releases, error) {
	if err := os.RemoveAll(root); err != nil {
		return nil, err
	}
	for _, kind := range []string{"good", "tampered"} {
		dst := filepath.Join(root, kind, version)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return nil, err
		}
		entries, err := os.ReadDir(filepath.Join(dir, version))
		if err != nil {
			return nil, fmt.Errorf("the release stand-in: %w", err)
		}
		for _, e := range entries {
			if err := os.Symlink(filepath.Join(dir, version, e.Name()), filepath.Join(dst, e.Name())); err != nil {
				return nil, err
			}
		}
	}
	sums, err := os.ReadFile(filepath.Join(dir, version, "SHA256SUMS"))
	if err != nil {
		return nil, fmt.Errorf("the release stand-in: %w", err)
	}
	tampered := filepath.Join(root, "tampered", version, "SHA256SUMS")
	if err := os.Remove(tampered); err != nil {
		return nil, err
	}
	flip := map[byte]byte{'0': '1', '1': '0'}
	b := []byte(string(sums))
	for i, ch := range b {
		if to, ok := flip[ch]; ok {
			b[i] = to
			break
		}
	}
	if err := os.WriteFile(tampered, b, 0o644); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(root)), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &releases{url: "http://" + ln.Addr().String(), server: srv}, nil
}

func (r *releases) close() { _ = r.server.Close() }

// report prints an act run's outcome, job by job.
func report(r *actRun) {
	fmt.Printf("  act %s: exit %d in %.1f s\n", r.name, r.code, r.took.Seconds())
	for _, job := range slices.Sorted(func(yield func(string) bool) {
		for j := range r.jobs {
			if !yield(j) {
				return
			}
		}
	}) {
		fmt.Printf("    job %-40s %-8s kubeproof run exited %v\n", job, r.jobs[job], r.exits[job])
	}
}
