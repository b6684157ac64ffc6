//go:build e2e

package incluster_test

// The in-cluster test runs the real kubeproof binary (make build) against a
// local cluster of its own, used as one kubeproof did not make (ci/registry.sh):
// its nodes pull kubeproof's images from a registry served here, every run
// reaches it through its kubeconfig only. It checks what issue 39 asks of
// run --in-cluster: the report copied back, the same verdicts as a run
// from outside except claims whose reason names a capability the two runs
// differ in, nothing left after a run, after Ctrl-C and after two; and bad
// input on a real cluster. It needs root and the warm cache (make incluster):
//
//	go test -tags e2e -count=1 -run TestInCluster -v ./internal/tools/incluster
//
// KUBEPROOF_INCLUSTER_CLAIMS narrows the runs to some claims (--claims).

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/contract/ownership"
	"github.com/kubeproof/kubeproof/internal/provision"
	"github.com/kubeproof/kubeproof/internal/report"
)

// The test's cluster and registry, beside any other on the machine.
const (
	testCluster  = "kp-incluster"
	registryPort = "5021"
	registry     = "127.0.0.1:" + registryPort + "/kubeproof"
)

var upFlags = []string{"--name", testCluster, "--apiserver-port", "7543", "--pod-cidr", "10.247.0.0/16", "--service-cidr", "10.99.0.0/16"}

func kubeproofBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("KUBEPROOF_BIN")
	if bin == "" {
		bin = "../../../_output/bin/kubeproof"
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("no kubeproof binary at %s (make build, or set KUBEPROOF_BIN): %v", abs, err)
	}
	return abs
}

// env is the test's cluster, as a user who did not make it has it.
type env struct {
	kp         string
	kubeconfig string
	client     kubernetes.Interface
}

// setUp brings the cluster up without kubeproof's images on its node and
// serves the registry it pulls them from; both go when the test ends.
func setUp(t *testing.T) *env {
	t.Helper()
	kp := kubeproofBin(t)
	down := func() {
		out, err := exec.Command(kp, append([]string{"down"}, upFlags[:2]...)...).CombinedOutput()
		if err != nil {
			t.Errorf("kubeproof down: %v\n%s", err, out)
		}
	}
	up := exec.Command(kp, append([]string{"up", "--image-registry", registry, "--insecure-registry", "--load-images=false"}, upFlags...)...)
	if out, err := up.CombinedOutput(); err != nil {
		down()
		t.Fatalf("kubeproof up: %v\n%s", err, out)
	}
	t.Cleanup(down)
	vars := map[string]string{}
	out, err := exec.Command(kp, append([]string{"env"}, upFlags[:2]...)...).Output()
	if err != nil {
		t.Fatalf("kubeproof env: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(strings.TrimPrefix(l, "export "), "="); ok {
			vars[k] = strings.Trim(v, `'"`)
		}
	}
	if vars["KUBECONFIG"] == "" || vars["KUBEPROOF_NODE_REGISTRY"] == "" {
		t.Fatalf("kubeproof env names no KUBECONFIG or KUBEPROOF_NODE_REGISTRY:\n%s", out)
	}
	serve := exec.Command(kp, "registry", "serve", "--listen", "127.0.0.1:"+registryPort, "--listen", vars["KUBEPROOF_NODE_REGISTRY"], "--dir", t.TempDir())
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serve.Process.Signal(syscall.SIGTERM); _ = serve.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", "127.0.0.1:"+registryPort)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the registry did not answer within 10 s: %v", err)
		}
		time.Sleep(100 * time.Millisecond) // another process starting
	}
	_, client, err := cluster.NewClient(vars["KUBECONFIG"], "")
	if err != nil {
		t.Fatal(err)
	}
	return &env{kp: kp, kubeconfig: vars["KUBECONFIG"], client: client}
}

// runFlags are the flags of every run: the cluster through its kubeconfig,
// the registry, and the selection.
func (e *env) runFlags(kubeconfig string) []string {
	f := []string{"--provider", "kubeconfig", "--kubeconfig", kubeconfig, "--disposable",
		"--image-registry", registry, "--insecure-registry", "--parallel", "4"}
	if c := os.Getenv("KUBEPROOF_INCLUSTER_CLAIMS"); c != "" {
		f = append(f, "--claims", c)
	}
	return f
}

// output is a run's output, written and read by different goroutines.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// run runs kubeproof and returns its exit code and output.
func (e *env) run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	return e.runWith(t, nil, args...)
}

// runWith runs kubeproof with extra environment variables.
func (e *env) runWith(t *testing.T, environ []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(e.kp, args...)
	cmd.Env = append(os.Environ(), environ...)
	out := &output{}
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String()
	case err != nil:
		t.Fatalf("kubeproof %v: %v", args, err)
	}
	return 0, out.String()
}

// leftovers are the objects of kubeproof runs in the cluster (every kind
// kubeproof cleanup looks for) and the Jobs of runs inside it.
func (e *env) leftovers(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	sel := metav1.ListOptions{LabelSelector: ownership.Label}
	var out []string
	nss, err := e.client.CoreV1().Namespaces().List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range nss.Items {
		out = append(out, "namespace "+ns.Name)
	}
	crs, err := e.client.RbacV1().ClusterRoles().List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range crs.Items {
		out = append(out, "clusterrole "+r.Name)
	}
	crbs, err := e.client.RbacV1().ClusterRoleBindings().List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range crbs.Items {
		out = append(out, "clusterrolebinding "+b.Name)
	}
	jobs, err := e.client.BatchV1().Jobs("").List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs.Items {
		out = append(out, "job "+j.Namespace+"/"+j.Name)
	}
	return out
}

func (e *env) clean(t *testing.T) {
	t.Helper()
	if l := e.leftovers(t); len(l) > 0 {
		t.Errorf("left in the cluster: %v", l)
	}
}

func TestInCluster(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the local provider needs root")
	}
	e := setUp(t)
	t.Run("bad input", func(t *testing.T) { e.badInput(t) })
	t.Run("the same verdicts from inside", func(t *testing.T) { e.sameVerdicts(t) })
	for _, tc := range []struct {
		name   string
		count  int
		report bool
	}{
		{"SIGINT", 1, true},
		{"two SIGINTs skip the report", 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) { e.interrupt(t, tc.count, tc.report) })
	}
}

// sameVerdicts runs the suites from outside and from inside the cluster
// and compares their claims.json: a verdict may differ only where a reason
// names a capability one run has and the other lacks.
func (e *env) sameVerdicts(t *testing.T) {
	outside, inside := t.TempDir(), t.TempDir()
	if keep := os.Getenv("KUBEPROOF_INCLUSTER_OUT"); keep != "" {
		outside, inside = filepath.Join(keep, "outside"), filepath.Join(keep, "inside")
	}
	// Like with like: both runs as one user, who has a token (as the
	// run inside has its ServiceAccount's), with kubectl of the release the
	// run inside carries. A client certificate and this machine's kubectl
	// change verdicts that follow them (004-KUBECTL-POST: its condition
	// names the token), whichever side of the cluster the run is on.
	admin := e.adminWithToken(t)
	path := "PATH=" + filepath.Join(provision.DefaultCacheDir(), "binaries", "kubernetes-"+provision.DefaultKubernetesVersion) + string(os.PathListSeparator) + os.Getenv("PATH")
	began := time.Now()
	codeOut, logOut := e.runWith(t, []string{path}, append([]string{"run", "--report-dir", outside}, e.runFlags(admin)...)...)
	t.Logf("from outside: exit %d in %s", codeOut, time.Since(began).Round(time.Second))
	began = time.Now()
	codeIn, logIn := e.run(t, append([]string{"run", "--in-cluster", "--report-dir", inside}, e.runFlags(admin)...)...)
	t.Logf("from inside: exit %d in %s", codeIn, time.Since(began).Round(time.Second))
	if codeOut > 1 || codeIn > 1 || codeOut != codeIn {
		t.Errorf("exit codes: %d from outside, %d from inside; want the same, 0 or 1\n--- outside:\n%s\n--- inside:\n%s", codeOut, codeIn, tail(logOut), tail(logIn))
	}
	if !strings.Contains(logIn, "copied the run's report directory out of the cluster") {
		t.Errorf("the run inside's reports were not copied out:\n%s", tail(logIn))
	}
	runs := []report.Report{load(t, outside), load(t, inside)}
	infos := []*cluster.Info{loadInfo(t, outside), loadInfo(t, inside)}
	if !strings.Contains(infos[1].Missing(cluster.AuditLog), "run --in-cluster") {
		t.Errorf("the run inside's cluster.json does not say it ran in the cluster: %s", infos[1].Missing(cluster.AuditLog))
	}
	code, diff := e.run(t, "report", "diff", outside, inside)
	t.Logf("kubeproof report diff (exit %d):\n%s", code, diff)
	differ := capabilityDiff(infos[0], infos[1])
	for _, d := range report.Diff(runs, report.DiffOptions{}) {
		reasons := []string{reasonOf(runs[0], d.Claim), reasonOf(runs[1], d.Claim)}
		named := slices.ContainsFunc(differ, func(c cluster.Capability) bool {
			return slices.ContainsFunc(reasons, func(r string) bool { return strings.Contains(r, "capability "+string(c)) })
		})
		if !named {
			t.Errorf("%s: %s from outside, %s from inside, and neither reason names a capability the runs differ in (%v):\n  outside: %s\n  inside: %s",
				d.Claim, d.Verdicts[0], d.Verdicts[1], differ, reasons[0], reasons[1])
		}
	}
	for v, n := range runs[1].Summary {
		t.Logf("inside: %s %d (outside %d)", v, n, runs[0].Summary[v])
	}
	e.clean(t)
}

// capabilityDiff are the capabilities one cluster info has and the other
// lacks.
func capabilityDiff(a, b *cluster.Info) []cluster.Capability {
	var out []cluster.Capability
	for _, c := range cluster.Capabilities {
		if a.Has(c) != b.Has(c) {
			out = append(out, c)
		}
	}
	return out
}

func reasonOf(r report.Report, claim string) string {
	for _, d := range r.Documents {
		for _, c := range d.Claims {
			if c.Claim.ID == claim {
				return c.Reason
			}
		}
	}
	return ""
}

func loadInfo(t *testing.T, dir string) *cluster.Info {
	t.Helper()
	info, err := cluster.Load(filepath.Join(dir, "cluster.json"))
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func load(t *testing.T, dir string) report.Report {
	t.Helper()
	r, err := report.Load(dir)
	if err != nil {
		t.Fatalf("no report in %s: %v", dir, err)
	}
	return r
}

func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}

// interrupt starts a run inside the cluster, sends it count SIGINTs once
// its specs run there, and checks the exit code, the report (partial, or
// none after two) and that nothing is left.
func (e *env) interrupt(t *testing.T, count int, wantReport bool) {
	dir := t.TempDir()
	// Every spec, whatever the selection of the other runs: the signal
	// must land while specs run.
	flags := slices.DeleteFunc(e.runFlags(e.kubeconfig), func(f string) bool { return f == "--claims" || f == os.Getenv("KUBEPROOF_INCLUSTER_CLAIMS") })
	cmd := exec.Command(e.kp, append([]string{"run", "--in-cluster", "--report-dir", dir}, flags...)...)
	out := &output{}
	cmd.Stderr = out
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	specs := make(chan struct{})
	go func() {
		r := bufio.NewReader(pipe)
		var stdout bytes.Buffer
		seen := false
		// Ginkgo, in the run inside, prints a • for each spec that
		// finished, after "Will run N of M specs", among S for those
		// skipped (kubeproof's progress lines have a • after a space).
		finished := regexp.MustCompile(`(?m)Will run \d+ of \d+ specs\n[\s\S]*(^|[^ \n])•$`)
		for {
			b, err := r.ReadByte()
			if err != nil {
				break
			}
			_, _ = out.Write([]byte{b})
			stdout.WriteByte(b)
			if !seen && b == 0xa2 && finished.Match(stdout.Bytes()) {
				seen = true
				close(specs)
			}
		}
		exited <- cmd.Wait()
	}()
	select {
	case <-specs:
	case err := <-exited:
		t.Fatalf("the run ended before a spec finished in the cluster: %v\n%s", err, tail(out.String()))
	case <-time.After(10 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("no spec finished in the cluster within 10 minutes:\n%s", tail(out.String()))
	}
	sent := time.Now()
	for i := 0; i < count; i++ {
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		if i+1 < count {
			waitFor(t, out, "stopping;", 30*time.Second)
		}
	}
	var code int
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
	case <-time.After(10 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("kubeproof did not end within 10 minutes of the interrupt:\n%s", tail(out.String()))
	}
	t.Logf("%d SIGINT: exit %d, %s after the first; the output's end:\n%s", count, code, time.Since(sent).Round(time.Second), tail(out.String()))
	if code != 130 {
		t.Errorf("exit code %d, want 130\n%s", code, tail(out.String()))
	}
	_, err = os.Stat(filepath.Join(dir, "claims.json"))
	switch {
	case wantReport && err != nil:
		t.Errorf("no report copied out after the interrupt: %v\n%s", err, tail(out.String()))
	case wantReport:
		if r := load(t, dir); r.Partial == "" {
			t.Errorf("the report copied out does not say it is partial: summary %v", r.Summary)
		}
	case err == nil:
		t.Errorf("a second interrupt must skip the report, but claims.json was copied out")
	}
	e.clean(t)
}

func waitFor(t *testing.T, out *output, text string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(out.String(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("%q did not appear within %s:\n%s", text, within, tail(out.String()))
		}
		time.Sleep(50 * time.Millisecond) // reading another process's output
	}
}
