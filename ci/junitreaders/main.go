// Command junitreaders reads kubeproof's JUnit reports (claims-junit.xml and
// junit.xml of report directories) with the parsers that the common CI
// readers are built on, and checks that each reader counts what the run's
// claims.json says: npm xml-js (mikepenz/action-junit-report), npm xml2js
// (dorny/test-reporter) and Debian's python3-junitparser
// (EnricoMi/publish-unit-test-result-action). make junit-readers runs it
// (part of make test).
//
//	junitreaders [--kubeproof BIN] [--refuted-as failure|passed] DIR...
//
// For each report directory it checks the files as the run wrote them
// (refuted claims shown as --refuted-as says the run was told, by default
// as failures), then judges a copy again with `kubeproof report` and the
// other --junit-refuted-as, and checks what that writes. Per file and
// reader it prints the tests, failures, errors and skips counted from the
// test cases (and it checks the counts the files state against them); it
// also checks what readers show: claims
// pointing at their line (file, line), class names without dots, a
// refuted claim's message being its reason, test names without labels and
// unique, no machine paths, no timeline for passed specs.
//
// The npm packages are installed with `npm ci` from ci/junit-readers'
// package-lock.json into the cache directory (once per lock file), the
// Debian package with apt-get (once). Exit codes: 0 every reader agrees, 1
// a reader counted otherwise or a check failed, 2 usage, 5 a missing tool.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/kubeproof/kubeproof/internal/debpkg"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision"
)

// junitparser is Debian's package of the Python reader's library, and the
// Python that has it (a python3 earlier on PATH, such as pyenv's, may not).
var (
	junitparser = debpkg.Package{Name: "python3-junitparser", File: "/usr/lib/python3/dist-packages/junitparser/__init__.py"}
	python      = "/usr/bin/python3"
)

func main() { os.Exit(int(run())) }

func run() exitcode.Code {
	fs := flag.NewFlagSet("junitreaders", flag.ContinueOnError)
	kubeproof := fs.String("kubeproof", "_output/bin/kubeproof", "the kubeproof binary that judges copies of the reports again")
	scripts := fs.String("scripts", "ci/junit-readers", "the directory of package.json, package-lock.json, read.js and read.py")
	cacheDir := fs.String("cache-dir", provision.DefaultCacheDir(), "where the npm packages are installed (junit-readers/<lock file digest>)")
	refutedAs := fs.String("refuted-as", "failure", "what the runs made refuted claims in claims-junit.xml (their --junit-refuted-as)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return exitcode.Usage
	}
	if fs.NArg() == 0 || (*refutedAs != "passed" && *refutedAs != "failure") {
		fmt.Fprintln(os.Stderr, "junitreaders: usage: junitreaders [--kubeproof BIN] [--refuted-as failure|passed] DIR...")
		return exitcode.Usage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	pr := progress.New(os.Stderr)
	modules, err := installNPM(ctx, *scripts, *cacheDir, pr)
	if err == nil {
		err = debpkg.Ensure(ctx, []debpkg.Package{junitparser}, pr)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "junitreaders: error: %v\n", err)
		return exitcode.Of(err)
	}
	r := readers{scripts: *scripts, nodeModules: modules}
	failed := false
	for _, dir := range fs.Args() {
		problems, err := checkDir(ctx, r, *kubeproof, dir, *refutedAs == "failure")
		if err != nil {
			fmt.Fprintf(os.Stderr, "junitreaders: error: %s: %v\n", dir, err)
			return exitcode.Of(err)
		}
		for _, p := range problems {
			fmt.Printf("  PROBLEM %s\n", p)
		}
		failed = failed || len(problems) > 0
	}
	if failed {
		fmt.Println("junitreaders: a reader counted otherwise than claims.json, or a check failed (PROBLEM above)")
		return exitcode.SpecsFailed
	}
	fmt.Println("junitreaders: every reader counted what claims.json says")
	return exitcode.OK
}

// checkDir checks a report directory's files as they are, then those that
// `kubeproof report` writes into a copy of it with the other
// --junit-refuted-as.
func checkDir(ctx context.Context, r readers, kubeproof, dir string, refutedFails bool) ([]string, error) {
	// A report kept as testdata was judged with the catalog of its day:
	// its claims' lines are checked against this checkout's files only
	// once judged again with it.
	problems, err := checkFiles(ctx, r, dir, dir, refutedFails, false)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "junitreaders-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	for _, name := range []string{"claims.json", "specs.json", "cluster.json"} {
		if err := copyFile(filepath.Join(dir, name), filepath.Join(tmp, name)); err != nil {
			return nil, err
		}
	}
	other := map[bool]string{true: "passed", false: "failure"}[refutedFails]
	cmd := exec.CommandContext(ctx, kubeproof, "report", "--report-dir", tmp, "--overwrite", "--junit-refuted-as", other)
	// A report with claims in error exits 13 (kubeproof help exit-codes),
	// having written its files all the same: those are what is checked.
	var exit *exec.ExitError
	if out, err := cmd.CombinedOutput(); err != nil && (!errors.As(err, &exit) || exit.ExitCode() != int(exitcode.ClaimsErrored)) {
		return nil, fmt.Errorf("%s report --report-dir %s --overwrite --junit-refuted-as %s: %w\n%s", kubeproof, tmp, other, err, out)
	}
	more, err := checkFiles(ctx, r, fmt.Sprintf("%s, judged again with report --junit-refuted-as %s", dir, other), tmp, !refutedFails, true)
	return append(problems, more...), err
}

// checkFiles reads both JUnit files of dir with every reader, prints the
// counts, and returns what does not match claims.json. current: the report
// was judged with this checkout's catalog.
func checkFiles(ctx context.Context, r readers, label, dir string, refutedFails, current bool) ([]string, error) {
	rep, err := loadReport(dir)
	if err != nil {
		return nil, err
	}
	claimsFile, specsFile := filepath.Join(dir, "claims-junit.xml"), filepath.Join(dir, "junit.xml")
	parsed, err := r.read(ctx, claimsFile, specsFile)
	if err != nil {
		return nil, err
	}
	var problems []string
	fmt.Printf("\n%s\n", label)
	fmt.Printf("  %-18s %-22s %6s %9s %7s %8s\n", "FILE", "COUNTED BY", "TESTS", "FAILURES", "ERRORS", "SKIPPED")
	times := map[string]float64{}
	defer func() {
		if rep.Run != nil {
			fmt.Printf("  times: the run's wall time %.1f s, specs that decided claims ran %.1f s of it; the cases add up to %.1f s in claims-junit.xml, %.1f s in junit.xml\n",
				rep.Run.Seconds, rep.claimSpecsRan(), times["claims-junit.xml"], times["junit.xml"])
		}
	}()
	for _, f := range []struct {
		path   string
		want   Counts
		source string
		check  func(doc Doc) []string
	}{
		{claimsFile, rep.claimCounts(refutedFails), "claims.json's verdicts", func(doc Doc) []string {
			return checkClaimsJUnit(doc, rep, refutedFails, current)
		}},
		{specsFile, rep.specCounts(), "claims.json's specs", checkSpecsJUnit},
	} {
		name := filepath.Base(f.path)
		fmt.Printf("  %-18s %-22s %6d %9d %7d %8d\n", name, f.source, f.want.Tests, f.want.Failures, f.want.Errors, f.want.Skipped)
		for _, reader := range sortedKeys(parsed[f.path]) {
			doc := parsed[f.path][reader]
			got := doc.Counted()
			fmt.Printf("  %-18s %-22s %6d %9d %7d %8d\n", name, reader, got.Tests, got.Failures, got.Errors, got.Skipped)
			where := fmt.Sprintf("%s: %s, read by %s", label, name, reader)
			if got != f.want {
				problems = append(problems, fmt.Sprintf("%s: counted %s, %s says %s", where, got, f.source, f.want))
			}
			for _, p := range doc.Stated(got) {
				problems = append(problems, where+": "+p)
			}
			for _, p := range f.check(doc) {
				problems = append(problems, where+": "+p)
			}
			times[name] = doc.Time()
			for _, p := range checkTime(name, doc, rep) {
				problems = append(problems, where+": "+p)
			}
		}
		if len(parsed[f.path]) != 3 {
			problems = append(problems, fmt.Sprintf("%s: %s was read by %d readers, not 3", label, name, len(parsed[f.path])))
		}
	}
	return problems, nil
}

// readers runs the reader scripts.
type readers struct {
	scripts     string
	nodeModules string
}

// read returns, by file and reader, what each reader made of the files.
func (r readers) read(ctx context.Context, files ...string) (map[string]map[string]Doc, error) {
	out := map[string]map[string]Doc{}
	node := exec.CommandContext(ctx, "node", append([]string{filepath.Join(r.scripts, "read.js")}, files...)...)
	node.Env = append(os.Environ(), "NODE_PATH="+r.nodeModules)
	py := exec.CommandContext(ctx, python, append([]string{filepath.Join(r.scripts, "read.py")}, files...)...)
	for _, cmd := range []*exec.Cmd{node, py} {
		var stderr strings.Builder
		cmd.Stderr = &stderr
		data, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("%s: %w: %s", strings.Join(cmd.Args, " "), err, strings.TrimSpace(stderr.String()))
		}
		var got map[string]map[string]Doc
		if err := json.Unmarshal(data, &got); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(cmd.Args[1]), err)
		}
		for file, byReader := range got {
			if out[file] == nil {
				out[file] = map[string]Doc{}
			}
			for reader, doc := range byReader {
				out[file][reader] = doc
			}
		}
	}
	return out, nil
}

// installNPM installs package-lock.json's packages into the cache, once per
// lock file (keyed by its digest), and returns their node_modules.
func installNPM(ctx context.Context, scripts, cacheDir string, pr *progress.Printer) (string, error) {
	lock, err := os.ReadFile(filepath.Join(scripts, "package-lock.json"))
	if err != nil {
		return "", exitcode.With(exitcode.Usage, err)
	}
	sum := sha256.Sum256(lock)
	dir := filepath.Join(cacheDir, "junit-readers", hex.EncodeToString(sum[:])[:16])
	modules := filepath.Join(dir, "node_modules")
	stamp := filepath.Join(dir, ".installed")
	if _, err := os.Stat(stamp); err == nil {
		pr.Infof("npm packages of %s: installed in %s", filepath.Join(scripts, "package-lock.json"), dir)
		return modules, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", exitcode.Errorf(exitcode.MissingTool, "npm not found: install Node.js and npm (Debian: nodejs npm)")
	}
	// A half-done install (killed) is started again from nothing.
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for _, name := range []string{"package.json", "package-lock.json"} {
		if err := copyFile(filepath.Join(scripts, name), filepath.Join(dir, name)); err != nil {
			return "", err
		}
	}
	done := pr.Step("npm ci (%s) into %s", filepath.Join(scripts, "package-lock.json"), dir)
	cmd := exec.CommandContext(ctx, npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		err = fmt.Errorf("npm ci: %w\n%s", err, out)
	}
	done(err)
	if err != nil {
		return "", err
	}
	return modules, os.WriteFile(stamp, nil, 0o644)
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return exitcode.With(exitcode.Usage, err)
		}
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
