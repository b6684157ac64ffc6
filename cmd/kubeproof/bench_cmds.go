package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/framework/images"
	"github.com/kubeproof/kubeproof/internal/cli/bench"
	"github.com/kubeproof/kubeproof/internal/exitcode"
)

type benchOptions struct {
	providers []string
	pods      int
	suites    bool
	parallel  int
	output    string
}

// benchResult is what `kubeproof bench` writes to bench.json.
type benchResult struct {
	GeneratedAt time.Time       `json:"generatedAt"`
	Kubeproof   string          `json:"kubeproof"`
	CPUs        int             `json:"cpus"`
	Providers   []providerBench `json:"providers"`
	// HarnessPeakMiB is the peak resident memory of the kubeproof process
	// that ran the benchmarks (clients, watches, the providers' own work).
	HarnessPeakMiB float64 `json:"harnessPeakMiB"`
}

type providerBench struct {
	Provider   string                    `json:"provider"`
	Nodes      int                       `json:"nodes"`
	UpMs       float64                   `json:"upMs"`
	Components []cluster.ComponentStatus `json:"components"`
	DownMs     float64                   `json:"downMs"`
	// PodStartup is the SIG scalability pod startup latency: creation to
	// all containers running, seen by watch.
	PodStartup bench.Distribution `json:"podStartupMs"`
	Suite      *suiteBench        `json:"suite,omitempty"`
	// ComponentPeakMiB is each component process's peak resident memory,
	// read before the cluster goes down (providers whose components are
	// processes on this machine; kind's run inside node containers).
	ComponentPeakMiB map[string]float64 `json:"componentPeakMiB,omitempty"`
}

type suiteBench struct {
	WallMs   float64            `json:"wallMs"`
	Parallel int                `json:"parallel"`
	Passed   bool               `json:"passed"`
	Spec     bench.Distribution `json:"specRunMs"`
	Setup    bench.Distribution `json:"harnessSetupMs"`
	Teardown bench.Distribution `json:"harnessTeardownMs"`
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
once (wall time, and the harness's own setup and teardown per spec), and takes the
cluster down again, timed. Results go to bench.json and bench.md in --output. Nothing
here passes or fails on a number.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if b.pods < 1 || b.parallel < 1 {
				return exitcode.Errorf(exitcode.Usage, "--pods and --parallel must be 1 or more")
			}
			out, err := filepath.Abs(b.output)
			if err != nil {
				return exitcode.Errorf(exitcode.Usage, "--output: %v", err)
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return exitcode.Errorf(exitcode.Usage, "--output: %v", err)
			}
			res := benchResult{GeneratedAt: time.Now().UTC(), Kubeproof: version(), CPUs: runtime.NumCPU()}
			for _, name := range b.providers {
				if !makesClusters(name) {
					return exitcode.Errorf(exitcode.Usage, "--providers %s: bench brings clusters up, so only local and kind", name)
				}
				o.provider = name
				pb, err := benchProvider(cmd, o, b, out)
				if err != nil {
					return err
				}
				res.Providers = append(res.Providers, pb)
			}
			res.HarnessPeakMiB = bench.SelfPeakRSSMiB()
			return writeBench(out, res)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&b.providers, "providers", []string{"local"}, "providers to measure, in order: local, kind")
	f.IntVar(&b.pods, "pods", 50, "Pods for the startup latency measurement")
	f.BoolVar(&b.suites, "suites", true, "also run every suite once and measure it")
	f.IntVar(&b.parallel, "parallel", 4, "parallel processes for the suites")
	f.StringVar(&b.output, "output", "_output/bench", "directory for bench.json and bench.md")
	addClusterFlags(cmd, o)
	return cmd
}

func benchProvider(cmd *cobra.Command, o *options, b *benchOptions, out string) (pb providerBench, err error) {
	ctx := cmd.Context()
	pr := printer()
	o.ephemeral = true
	p, err := newProvider(cmd, o, pr)
	if err != nil {
		return pb, err
	}
	pb.Provider = o.provider
	if _, err := p.Info(ctx); err == nil {
		return pb, exitcode.Errorf(exitcode.Conflict, "%s cluster %q is up: bench measures bringing it up (run `kubeproof down --provider %s` first)", o.provider, o.name, o.provider)
	}
	begin := time.Now()
	info, err := p.Up(ctx)
	if err != nil {
		return pb, err
	}
	pb.UpMs = framework.Millis(time.Since(begin))
	pb.Components, pb.Nodes = info.Components, len(info.Nodes)
	down := func() error {
		begin := time.Now()
		err := p.Down(context.WithoutCancel(ctx))
		pb.DownMs = framework.Millis(time.Since(begin))
		return err
	}
	defer func() {
		if pb.DownMs == 0 {
			_ = down()
		}
	}()

	cfg, err := cluster.RESTConfig(info.Kubeconfig, info.Context)
	if err != nil {
		return pb, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return pb, err
	}
	done := pr.Step("starting %d Pods (pod startup latency)", b.pods)
	lat, err := bench.PodStartup(ctx, client, b.pods, images.TestApp.Ref, 10*time.Minute)
	done(err)
	if err != nil {
		return pb, err
	}
	pb.PodStartup = bench.Summarize(lat)

	if b.suites {
		dir := filepath.Join(out, o.provider+"-suites")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return pb, err
		}
		infoPath := filepath.Join(dir, "cluster.json")
		if err := info.Save(infoPath); err != nil {
			return pb, err
		}
		begin := time.Now()
		code, err := runSpecProcess(ctx, infoPath, dir, "", &runOptions{parallel: b.parallel, timeout: time.Hour}, nil)
		if err != nil {
			return pb, err
		}
		s := &suiteBench{WallMs: framework.Millis(time.Since(begin)), Parallel: b.parallel, Passed: code == exitcode.OK}
		setup, teardown, spec, err := bench.SpecOverhead(filepath.Join(dir, specsReportName), framework.OverheadSetup, framework.OverheadTeardown)
		if err != nil {
			return pb, err
		}
		s.Spec, s.Setup, s.Teardown = bench.Summarize(spec), bench.Summarize(setup), bench.Summarize(teardown)
		s.RunnerPeakMiB = bench.ChildrenPeakRSSMiB()
		pb.Suite = s
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
		return pb, err
	}
	return pb, nil
}

func writeBench(dir string, res benchResult) error {
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.json"), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write bench.json: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# kubeproof benchmarks\n\n%s, kubeproof %s, %d CPUs. Milliseconds.\n\n", res.GeneratedAt.Format(time.RFC3339), res.Kubeproof, res.CPUs)
	fmt.Fprintln(&b, "| provider | nodes | up | down | pod startup p50 | p90 | p99 | max (n) | suites wall | spec p50 | harness setup p50 | teardown p50 |")
	fmt.Fprintln(&b, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, p := range res.Providers {
		ps := p.PodStartup
		suite := "| — | — | — | — |"
		if s := p.Suite; s != nil {
			suite = fmt.Sprintf("| %.0f (%d procs, passed: %v) | %.0f | %.0f | %.0f |", s.WallMs, s.Parallel, s.Passed, s.Spec.P50, s.Setup.P50, s.Teardown.P50)
		}
		fmt.Fprintf(&b, "| %s | %d | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f (%d) %s\n", p.Provider, p.Nodes, p.UpMs, p.DownMs, ps.P50, ps.P90, ps.P99, ps.Max, ps.N, suite)
	}
	for _, p := range res.Providers {
		if len(p.ComponentPeakMiB) == 0 {
			continue
		}
		names := make([]string, 0, len(p.ComponentPeakMiB))
		for n := range p.ComponentPeakMiB {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(&b, "\nPeak resident memory of the %s cluster's processes (MiB):", p.Provider)
		for _, n := range names {
			fmt.Fprintf(&b, " %s %.0f;", n, p.ComponentPeakMiB[n])
		}
		fmt.Fprintln(&b)
	}
	fmt.Fprintf(&b, "\nkubeproof's own peak resident memory: %.0f MiB", res.HarnessPeakMiB)
	for _, p := range res.Providers {
		if p.Suite != nil {
			fmt.Fprintf(&b, "; the %s spec runner's largest process: %.0f MiB", p.Provider, p.Suite.RunnerPeakMiB)
		}
	}
	fmt.Fprintln(&b, ".")
	fmt.Fprintln(&b, "\nPod startup: creation (the create call) to all containers running (the watch event's receipt), this machine's clock; images already on the nodes.")
	fmt.Fprintln(&b, "Harness setup: namespace created and its default ServiceAccount present; teardown: the namespace's delete call (the suite waits for all namespaces to be gone once, at its end, inside the suites' wall time).")
	if err := os.WriteFile(filepath.Join(dir, "bench.md"), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write bench.md: %w", err)
	}
	fmt.Print(b.String())
	return nil
}
