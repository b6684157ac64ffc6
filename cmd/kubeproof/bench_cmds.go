package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision"
	"github.com/kubeproof/kubeproof/internal/tools/bench"
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
Results go to bench.json and bench.md in --report-dir: per measurement the median, least and
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
				return exitcode.Errorf(exitcode.Usage, "--report-dir: %v", err)
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return exitcode.Errorf(exitcode.Usage, "--report-dir: %v", err)
			}
			releases := b.releases
			if len(releases) == 0 {
				releases = []string{o.Shape.KubernetesVersion}
			}
			for _, v := range releases {
				if !releaseRE.MatchString(v) {
					return exitcode.Errorf(exitcode.Usage, "--kubernetes-versions: %q is not a release version like v1.37.2", v)
				}
			}
			// Each provider's request, as the flags make it for that
			// provider: a flag none of them reads is refused.
			var clusters []provision.Request
			for _, name := range b.providers {
				po := *o
				po.Request.Provider, po.Why = name, "--providers "+name
				req, err := request(cmd, &po)
				if err != nil {
					return err
				}
				clusters = append(clusters, req)
			}
			res, err := bench.Run(cmd.Context(), bench.Plan{
				Clusters: clusters, Releases: b.releases, Rounds: b.rounds, Pods: b.pods,
				Suites: b.suites, SuitesOn: b.suitesOn, Parallel: b.parallel, WarmUp: b.warmUp,
				EndToEnd: b.endToEnd, EndToEndName: b.endToEndName, Cold: b.cold, Output: out, Kubeproof: version(),
			})
			if err != nil {
				return err
			}
			return bench.Write(os.Stdout, out, res)
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
	// --report-dir, as run's: -o is an output format on every command.
	f.StringVar(&b.output, "report-dir", "_output/bench", "directory for bench.json and bench.md")
	addClusterFlags(cmd, o)
	return cmd
}
