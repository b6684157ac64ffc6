package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/framework/images"
	"github.com/kubeproof/kubeproof/internal/cli/bench"
	"github.com/kubeproof/kubeproof/internal/exitcode"
)

type benchOptions struct {
	providers []string
	// releases are the Kubernetes releases to measure each provider on;
	// empty: --kubernetes-version alone.
	releases []string
	rounds   int
	pods     int
	suites   bool
	// suitesOn are the providers whose suites are measured; empty: all.
	suitesOn []string
	parallel []int
	warmUp   bool
	// endToEnd is a command timed whole (make run), --rounds times warm
	// and, with cold, once on empty caches.
	endToEnd string
	// endToEndName names it in bench.md; empty: the command itself.
	endToEndName string
	cold         bool
	output       string
}

// benchResult is what `kubeproof bench` writes to bench.json.
type benchResult struct {
	GeneratedAt time.Time       `json:"generatedAt"`
	Kubeproof   string          `json:"kubeproof"`
	CPUs        int             `json:"cpus"`
	Providers   []providerBench `json:"providers"`
	EndToEnd    *commandBench   `json:"endToEnd,omitempty"`
	// HarnessPeakMiB is the peak resident memory of the kubeproof process
	// that ran the benchmarks (clients, watches, the providers' own work).
	HarnessPeakMiB float64 `json:"harnessPeakMiB"`
}

type providerBench struct {
	Provider          string       `json:"provider"`
	KubernetesVersion string       `json:"kubernetesVersion"`
	Nodes             int          `json:"nodes"`
	Rounds            []roundBench `json:"rounds"`
	// ComponentPeakMiB is each component process's peak resident memory in
	// the last round, read before the cluster goes down (providers whose
	// components are processes on this machine; kind's run inside node
	// containers).
	ComponentPeakMiB map[string]float64 `json:"componentPeakMiB,omitempty"`
}

// roundBench is one bring-up, measured: up, Pods, the suites, down.
type roundBench struct {
	UpMs       float64                   `json:"upMs"`
	Components []cluster.ComponentStatus `json:"components"`
	DownMs     float64                   `json:"downMs"`
	// PodStartup is the SIG scalability pod startup latency: creation to
	// all containers running, seen by watch.
	PodStartup bench.Distribution `json:"podStartupMs"`
	Suites     []suiteBench       `json:"suites,omitempty"`
}

type suiteBench struct {
	WallMs   float64            `json:"wallMs"`
	Parallel int                `json:"parallel"`
	Passed   bool               `json:"passed"`
	Spec     bench.Distribution `json:"specRunMs"`
	Setup    bench.Distribution `json:"harnessSetupMs"`
	Teardown bench.Distribution `json:"harnessTeardownMs"`
	// FinalWaitMs is the suite's end: the wait for every namespace of the
	// run to be gone.
	FinalWaitMs float64 `json:"finalNamespaceWaitMs"`
	// RunnerPeakMiB is the largest peak resident memory among the spec
	// runner's processes (Ginkgo and its parallel spec processes).
	RunnerPeakMiB float64 `json:"runnerPeakMiB"`
}

func newBenchCommand(o *options) *cobra.Command {
	b := &benchOptions{}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure cluster up and down times, pod startup latency and the suites' cost; write the numbers to files",
		Long: `bench brings each provider's cluster up (it must be down), measures how long that takes,
starts --pods Pods and measures their startup latency (SIG scalability's definition:
creation to all containers running, seen by a watch; p50, p90, p99), runs every suite
once per --parallel value (wall time, the final wait for the run's namespaces, and the
harness's own setup and teardown per spec), and takes the cluster down again, timed;
--rounds times. Before the first round, each cluster is brought up and down once untimed
(--warm-up), so that building binaries and images is not counted as bringing it up.
With --end-to-end, bench then times that command whole, as a user runs it (make run: build,
bring up, the suites, the report, down), --rounds times; with --cold also once on empty
caches (kubeproof's cache directory and Go's build cache new and empty, removed after).
Results go to bench.json and bench.md in --output: per measurement the median, least and
most over the rounds. Nothing here passes or fails on a number.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if b.pods < 1 || b.rounds < 1 || len(b.parallel) == 0 || slices.Min(b.parallel) < 1 {
				return exitcode.Errorf(exitcode.Usage, "--pods, --rounds and every --parallel must be 1 or more")
			}
			if b.cold && b.endToEnd == "" {
				return exitcode.Errorf(exitcode.Usage, "--cold times the --end-to-end command on empty caches: give --end-to-end too")
			}
			for _, name := range b.suitesOn {
				if !slices.Contains(b.providers, name) {
					return exitcode.Errorf(exitcode.Usage, "--suites-providers %s: not one of --providers %s", name, strings.Join(b.providers, ","))
				}
			}
			out, err := filepath.Abs(b.output)
			if err != nil {
				return exitcode.Errorf(exitcode.Usage, "--output: %v", err)
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return exitcode.Errorf(exitcode.Usage, "--output: %v", err)
			}
			releases := b.releases
			if len(releases) == 0 {
				releases = []string{o.kubernetesVersion}
			}
			for _, v := range releases {
				if !releaseRE.MatchString(v) {
					return exitcode.Errorf(exitcode.Usage, "--kubernetes-versions: %q is not a release version like v1.37.2", v)
				}
			}
			res := benchResult{GeneratedAt: time.Now().UTC(), Kubeproof: version(), CPUs: runtime.NumCPU()}
			for _, name := range b.providers {
				if !makesClusters(name) {
					return exitcode.Errorf(exitcode.Usage, "--providers %s: bench brings clusters up, so only local and kind", name)
				}
				o.provider = name
				for _, v := range releases {
					if len(b.releases) > 0 {
						o.kubernetesVersion, o.etcdVersion = v, ""
					}
					pb := providerBench{Provider: name, KubernetesVersion: v}
					if b.warmUp {
						if err := benchWarmUp(cmd, o); err != nil {
							return err
						}
					}
					for i := range b.rounds {
						rb, err := benchRound(cmd, o, b, &pb, filepath.Join(out, fmt.Sprintf("%s-%s-round-%d", name, v, i+1)))
						if err != nil {
							return err
						}
						pb.Rounds = append(pb.Rounds, rb)
					}
					res.Providers = append(res.Providers, pb)
				}
			}
			if b.endToEnd != "" {
				eb, err := benchCommand(cmd.Context(), b, out)
				res.EndToEnd = &eb
				if err != nil {
					return err
				}
			}
			res.HarnessPeakMiB = bench.SelfPeakRSSMiB()
			return writeBench(out, res)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&b.providers, "providers", []string{"local"}, "providers to measure, in order: local, kind")
	f.StringSliceVar(&b.releases, "kubernetes-versions", nil, "Kubernetes releases to measure each provider on, in order (default: --kubernetes-version)")
	f.IntVar(&b.rounds, "rounds", 1, "bring-ups to measure per provider (the report gives the median, least and most)")
	f.IntVar(&b.pods, "pods", 50, "Pods for the startup latency measurement")
	f.BoolVar(&b.suites, "suites", true, "also run every suite, once per --parallel value, and measure it")
	f.StringSliceVar(&b.suitesOn, "suites-providers", nil, "providers whose suites are measured (default: every one of --providers)")
	f.IntSliceVar(&b.parallel, "parallel", []int{4}, "parallel processes for the suites; several (4,1) run the suites once each")
	f.BoolVar(&b.warmUp, "warm-up", true, "bring each cluster up and down once, untimed, before the rounds (builds what it needs)")
	f.StringVar(&b.endToEnd, "end-to-end", "", `a command to time whole, in a shell, --rounds times after the providers (e.g. "make run")`)
	f.StringVar(&b.endToEndName, "end-to-end-name", "", "the --end-to-end command's name in bench.md (default: the command)")
	f.BoolVar(&b.cold, "cold", false, "also time --end-to-end once with kubeproof's cache and Go's build cache empty (a fresh machine's first run)")
	f.StringVar(&b.output, "output", "_output/bench", "directory for bench.json and bench.md")
	addClusterFlags(cmd, o)
	return cmd
}

// benchRound brings the provider's cluster up and measures one round; its
// suites' reports go under dir.
func benchRound(cmd *cobra.Command, o *options, b *benchOptions, pb *providerBench, dir string) (rb roundBench, err error) {
	ctx := cmd.Context()
	pr := printer()
	p, err := benchProvider(cmd, o)
	if err != nil {
		return rb, err
	}
	begin := time.Now()
	info, err := p.Up(ctx)
	if err != nil {
		return rb, err
	}
	rb.UpMs = framework.Millis(time.Since(begin))
	rb.Components, pb.Nodes = info.Components, len(info.Nodes)
	down := func() error {
		begin := time.Now()
		err := p.Down(context.WithoutCancel(ctx))
		rb.DownMs = framework.Millis(time.Since(begin))
		return err
	}
	defer func() {
		if rb.DownMs == 0 {
			_ = down()
		}
	}()

	_, client, err := cluster.NewClient(info.Kubeconfig, info.Context)
	if err != nil {
		return rb, err
	}
	done := pr.Step("starting %d Pods (pod startup latency)", b.pods)
	lat, err := bench.PodStartup(ctx, client, b.pods, images.TestApp.Ref, 10*time.Minute)
	done(err)
	if err != nil {
		return rb, err
	}
	rb.PodStartup = bench.Summarize(lat)

	for _, parallel := range b.parallel {
		if !b.suites || (len(b.suitesOn) > 0 && !slices.Contains(b.suitesOn, o.provider)) {
			break
		}
		s, err := benchSuites(ctx, info, filepath.Join(dir, fmt.Sprintf("suites-parallel-%d", parallel)), parallel)
		if err != nil {
			return rb, err
		}
		rb.Suites = append(rb.Suites, s)
	}
	for _, c := range info.Components {
		if c.PID <= 0 || c.Process == "" {
			continue
		}
		if mib, err := bench.PeakRSSMiB(c.PID); err == nil {
			if pb.ComponentPeakMiB == nil {
				pb.ComponentPeakMiB = map[string]float64{}
			}
			pb.ComponentPeakMiB[c.Process] = mib
		}
	}
	if err := down(); err != nil {
		return rb, err
	}
	return rb, nil
}

// benchProvider returns the provider of o for a cluster bench is about to
// bring up: it must be down, as bringing it up is what bench measures.
func benchProvider(cmd *cobra.Command, o *options) (cluster.Provider, error) {
	o.ephemeral = true
	p, err := newProvider(cmd, o, printer())
	if err != nil {
		return nil, err
	}
	if _, err := p.Info(cmd.Context()); err == nil {
		return nil, exitcode.Errorf(exitcode.Conflict, "%s cluster %q is up: bench measures bringing it up (run `kubeproof down --provider %s` first)", o.provider, o.name, o.provider)
	}
	return p, nil
}

// benchWarmUp brings the cluster of o up and down once, untimed: a first
// bring-up builds or loads what the provider needs (binaries, the kind node
// image) and fills the machine's file cache, none of which is the time a
// bring-up takes.
func benchWarmUp(cmd *cobra.Command, o *options) error {
	p, err := benchProvider(cmd, o)
	if err != nil {
		return err
	}
	done := printer().Step("warming up: %s cluster up and down once, untimed", o.provider)
	_, err = p.Up(cmd.Context())
	if derr := p.Down(context.WithoutCancel(cmd.Context())); err == nil {
		err = derr
	}
	done(err)
	return err
}

// benchCommand times b.endToEnd whole: --rounds times as the machine is
// (warm, after the providers' rounds), then with --cold once on empty caches
// under out, removed afterwards.
func benchCommand(ctx context.Context, b *benchOptions, out string) (commandBench, error) {
	eb := commandBench{Command: b.endToEnd, Name: cmp.Or(b.endToEndName, b.endToEnd)}
	pr := printer()
	for i := range b.rounds {
		r, err := timeCommand(ctx, pr, fmt.Sprintf("end to end, warm, round %d of %d", i+1, b.rounds), b.endToEnd,
			filepath.Join(out, fmt.Sprintf("end-to-end-warm-%d.log", i+1)), nil)
		if err != nil {
			return eb, err
		}
		eb.Warm = append(eb.Warm, r)
	}
	if !b.cold {
		return eb, nil
	}
	caches := filepath.Join(out, "cold-caches")
	if err := os.RemoveAll(caches); err != nil {
		return eb, fmt.Errorf("empty the cold caches: %w", err)
	}
	defer os.RemoveAll(caches)
	r, err := timeCommand(ctx, pr, "end to end, cold (empty caches)", b.endToEnd, filepath.Join(out, "end-to-end-cold.log"), coldEnv(caches))
	if err != nil {
		return eb, err
	}
	eb.Cold = &r
	return eb, nil
}

// benchSuites runs every suite once on the cluster info describes, with
// parallel processes, reports in dir, and measures the run.
func benchSuites(ctx context.Context, info *cluster.Info, dir string, parallel int) (suiteBench, error) {
	s := suiteBench{Parallel: parallel}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return s, err
	}
	infoPath := filepath.Join(dir, "cluster.json")
	if err := info.Save(infoPath); err != nil {
		return s, err
	}
	begin := time.Now()
	code, err := runSpecProcess(ctx, infoPath, dir, "", &runOptions{parallel: parallel, timeout: time.Hour}, nil)
	if err != nil {
		return s, err
	}
	s.WallMs, s.Passed = framework.Millis(time.Since(begin)), code == exitcode.OK
	report := filepath.Join(dir, specsReportName)
	setup, teardown, spec, err := bench.SpecOverhead(report, framework.OverheadSetup, framework.OverheadTeardown)
	if err != nil {
		return s, err
	}
	s.Spec, s.Setup, s.Teardown = bench.Summarize(spec), bench.Summarize(setup), bench.Summarize(teardown)
	if s.FinalWaitMs, err = bench.FinalWaitMs(report); err != nil {
		return s, err
	}
	s.RunnerPeakMiB = bench.ChildrenPeakRSSMiB()
	return s, nil
}

func writeBench(dir string, res benchResult) error {
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.json"), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write bench.json: %w", err)
	}
	md := benchMarkdown(res)
	if err := os.WriteFile(filepath.Join(dir, "bench.md"), []byte(md), 0o644); err != nil {
		return fmt.Errorf("write bench.md: %w", err)
	}
	fmt.Print(md)
	return nil
}

// benchRow is one measurement over a provider's rounds.
type benchRow struct {
	what, provider string
	values         []float64 // milliseconds, one per round
}

// benchRows are the measurements of res, in the order a reader asks for
// them: up, Pods, the suites per --parallel, down.
func benchRows(res benchResult) []benchRow {
	var rows []benchRow
	for _, p := range res.Providers {
		over := func(what string, value func(roundBench) (float64, bool)) {
			row := benchRow{what: what, provider: p.Provider + " " + p.KubernetesVersion}
			for _, r := range p.Rounds {
				if v, ok := value(r); ok {
					row.values = append(row.values, v)
				}
			}
			if len(row.values) > 0 {
				rows = append(rows, row)
			}
		}
		over("kubeproof up", func(r roundBench) (float64, bool) { return r.UpMs, true })
		over("pod startup p50", func(r roundBench) (float64, bool) { return r.PodStartup.P50, r.PodStartup.N > 0 })
		over("pod startup p99", func(r roundBench) (float64, bool) { return r.PodStartup.P99, r.PodStartup.N > 0 })
		var parallels []int
		for _, r := range p.Rounds {
			for _, s := range r.Suites {
				if !slices.Contains(parallels, s.Parallel) {
					parallels = append(parallels, s.Parallel)
				}
			}
		}
		for _, n := range parallels {
			suite := func(value func(suiteBench) float64) func(roundBench) (float64, bool) {
				return func(r roundBench) (float64, bool) {
					for _, s := range r.Suites {
						if s.Parallel == n {
							return value(s), true
						}
					}
					return 0, false
				}
			}
			over(fmt.Sprintf("suites, --parallel %d", n), suite(func(s suiteBench) float64 { return s.WallMs }))
			over(fmt.Sprintf("  of which the final wait for namespaces (--parallel %d)", n), suite(func(s suiteBench) float64 { return s.FinalWaitMs }))
			over(fmt.Sprintf("  harness setup per spec, p50 (--parallel %d)", n), suite(func(s suiteBench) float64 { return s.Setup.P50 }))
		}
		over("kubeproof down", func(r roundBench) (float64, bool) { return r.DownMs, true })
	}
	if e := res.EndToEnd; e != nil {
		timed := func(what string, rounds []commandRound) {
			row := benchRow{what: fmt.Sprintf("`%s`, end to end, %s", cmp.Or(e.Name, e.Command), what), provider: "the command's own"}
			failed := 0
			for _, r := range rounds {
				row.values = append(row.values, r.WallMs)
				if r.ExitCode != 0 {
					failed++
				}
			}
			if failed > 0 {
				row.what += fmt.Sprintf(" (exit code not 0 in %d of %d: see the logs)", failed, len(rounds))
			}
			if len(rounds) > 0 {
				rows = append(rows, row)
			}
		}
		timed("warm", e.Warm)
		if e.Cold != nil {
			timed("cold (empty kubeproof and Go build caches)", []commandRound{*e.Cold})
		}
	}
	return rows
}

// seconds formats milliseconds as seconds, with more digits below a second
// (the harness's own setup is tens of milliseconds).
func seconds(ms float64) string {
	if ms < 1000 {
		return fmt.Sprintf("%.3f", ms/1000)
	}
	return fmt.Sprintf("%.1f", ms/1000)
}

// benchMarkdown is bench.md: one row per measurement, in seconds, with the
// median, least and most over the rounds.
func benchMarkdown(res benchResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# kubeproof benchmarks\n\n%s, kubeproof %s, %d CPUs. Seconds: median, least and most over the rounds.\n\n", res.GeneratedAt.Format(time.RFC3339), res.Kubeproof, res.CPUs)
	fmt.Fprintln(&b, "| measurement | cluster | rounds | median | least | most |")
	fmt.Fprintln(&b, "| --- | --- | --- | --- | --- | --- |")
	for _, row := range benchRows(res) {
		d := bench.Summarize(row.values)
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s |\n", row.what, row.provider, d.N, seconds(d.P50), seconds(d.Min), seconds(d.Max))
	}
	for _, p := range res.Providers {
		if len(p.ComponentPeakMiB) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\nPeak resident memory of the %s %s cluster's processes (MiB, last round; a component a spec restarted is not here, its first process is gone):", p.Provider, p.KubernetesVersion)
		for _, n := range slices.Sorted(maps.Keys(p.ComponentPeakMiB)) {
			fmt.Fprintf(&b, " %s %.0f;", n, p.ComponentPeakMiB[n])
		}
		fmt.Fprintln(&b)
	}
	fmt.Fprintf(&b, "\nkubeproof's own peak resident memory: %.0f MiB", res.HarnessPeakMiB)
	for _, p := range res.Providers {
		peak := 0.0
		for _, r := range p.Rounds {
			for _, s := range r.Suites {
				peak = max(peak, s.RunnerPeakMiB)
			}
		}
		if peak > 0 {
			fmt.Fprintf(&b, "; the %s spec runner's largest process: %.0f MiB", p.Provider, peak)
		}
	}
	fmt.Fprintln(&b, ".")
	fmt.Fprintln(&b, "\nPod startup: creation (the create call) to all containers running (the watch event's receipt), this machine's clock; images already on the nodes.")
	fmt.Fprintln(&b, "Harness setup: namespace created and its default ServiceAccount present. The final wait: the suites' end, until every namespace of the run is gone.")
	if res.EndToEnd != nil {
		fmt.Fprintln(&b, "End to end: the whole command, warm after the rounds above; cold with kubeproof's cache and Go's build cache new and empty (Go's module cache and the Debian packages stay: their time is the network's).")
	}
	return b.String()
}
