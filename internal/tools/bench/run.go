package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision"
	"github.com/kubeproof/kubeproof/internal/runner"
)

// Plan is what `kubeproof bench` measures, from its flags.
type Plan struct {
	// Clusters are the clusters to measure, one per provider, in order;
	// bench sets the release of each measurement.
	Clusters []provision.Request
	// Releases are the Kubernetes releases to measure each provider on;
	// empty: each cluster's release alone.
	Releases []string
	Rounds   int
	Pods     int
	Suites   bool
	// SuitesOn are the providers whose suites are measured; empty: all.
	SuitesOn []string
	Parallel []int
	WarmUp   bool
	// EndToEnd is a command timed whole (make run), Rounds times warm
	// and, with Cold, once on empty caches.
	EndToEnd string
	// EndToEndName names it in md; empty: the command itself.
	EndToEndName string
	Cold         bool
	// Output is the directory (absolute) for the rounds' reports and the
	// end-to-end logs.
	Output string
	// Kubeproof is this kubeproof's version.
	Kubeproof string
}

// Run brings each provider's clusters up and down, Rounds times per
// release, measuring each round, then times the end-to-end command.
func Run(ctx context.Context, b Plan) (Result, error) {
	res := Result{SchemaVersion: Schema, GeneratedAt: time.Now().UTC(), Kubeproof: b.Kubeproof, CPUs: runtime.NumCPU()}
	for _, o := range b.Clusters {
		name := o.Provider
		if !o.Makes() {
			return res, exitcode.Errorf(exitcode.Usage, "--providers %s: bench brings clusters up, so only local and kind", name)
		}
		releases := b.Releases
		if len(releases) == 0 {
			releases = []string{o.Shape.KubernetesVersion}
		}
		for _, v := range releases {
			if len(b.Releases) > 0 {
				o.Shape.KubernetesVersion, o.Shape.EtcdVersion = v, ""
			}
			pb := providerBench{Provider: name, KubernetesVersion: v}
			if b.WarmUp {
				if err := warmUp(ctx, o); err != nil {
					return res, err
				}
			}
			for i := range b.Rounds {
				rb, err := measureRound(ctx, o, b, &pb, filepath.Join(b.Output, fmt.Sprintf("%s-%s-round-%d", name, v, i+1)))
				if err != nil {
					return res, err
				}
				pb.Rounds = append(pb.Rounds, rb)
			}
			res.Providers = append(res.Providers, pb)
		}
	}
	if b.EndToEnd != "" {
		eb, err := timeEndToEnd(ctx, b, b.Output)
		res.EndToEnd = &eb
		if err != nil {
			return res, err
		}
	}
	res.HarnessPeakMiB = SelfPeakRSSMiB()
	return res, nil
}

// measureRound brings the provider's cluster up and measures one round; its
// suites' reports go under dir.
func measureRound(ctx context.Context, o provision.Request, b Plan, pb *providerBench, dir string) (rb roundBench, err error) {
	pr := runner.Printer()
	p, err := downProvider(ctx, o)
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
	done := pr.Step("starting %d Pods (pod startup latency)", b.Pods)
	lat, err := PodStartup(ctx, client, b.Pods, images.TestApp.Ref, 10*time.Minute)
	done(err)
	if err != nil {
		return rb, err
	}
	rb.PodStartup = Summarize(lat)

	for _, parallel := range b.Parallel {
		if !b.Suites || (len(b.SuitesOn) > 0 && !slices.Contains(b.SuitesOn, o.Provider)) {
			break
		}
		s, err := measureSuites(ctx, info, filepath.Join(dir, fmt.Sprintf("suites-parallel-%d", parallel)), parallel)
		if err != nil {
			return rb, err
		}
		rb.Suites = append(rb.Suites, s)
	}
	for _, c := range info.Components {
		if c.PID <= 0 || c.Process == "" {
			continue
		}
		if mib, err := PeakRSSMiB(c.PID); err == nil {
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

// downProvider returns the provider of o for a cluster bench is about to
// bring up: it must be down, as bringing it up is what bench measures.
func downProvider(ctx context.Context, o provision.Request) (cluster.Provider, error) {
	o.Shape.Ephemeral = true
	p, err := runner.NewProvider(ctx, o, runner.Printer())
	if err != nil {
		return nil, err
	}
	if _, err := p.Info(ctx); err == nil {
		return nil, exitcode.Errorf(exitcode.Conflict, "%s cluster %q is up: bench measures bringing it up (run `kubeproof down --provider %s` first)", o.Provider, o.Shape.Name, o.Provider)
	}
	return p, nil
}

// warmUp brings the cluster of o up and down once, untimed: a first
// bring-up builds or loads what the provider needs (binaries, the kind node
// image) and fills the machine's file cache, none of which is the time a
// bring-up takes.
func warmUp(ctx context.Context, o provision.Request) error {
	p, err := downProvider(ctx, o)
	if err != nil {
		return err
	}
	done := runner.Printer().Step("warming up: %s cluster up and down once, untimed", o.Provider)
	_, err = p.Up(ctx)
	if derr := p.Down(context.WithoutCancel(ctx)); err == nil {
		err = derr
	}
	done(err)
	return err
}

// measureSuites runs every suite once on the cluster info describes, with
// parallel processes, reports in dir, and measures the run.
func measureSuites(ctx context.Context, info *cluster.Info, dir string, parallel int) (suiteBench, error) {
	s := suiteBench{Parallel: parallel}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return s, err
	}
	infoPath := filepath.Join(dir, "cluster.json")
	if err := info.Save(infoPath); err != nil {
		return s, err
	}
	begin := time.Now()
	code, err := runner.RunSpecs(ctx, infoPath, dir, "", runner.Specs{Parallel: parallel, Timeout: time.Hour}, nil)
	if err != nil {
		return s, err
	}
	s.WallMs, s.Passed = framework.Millis(time.Since(begin)), code == exitcode.OK
	report := filepath.Join(dir, runner.SpecsReportName)
	setup, teardown, spec, err := SpecOverhead(report, framework.OverheadSetup, framework.OverheadTeardown)
	if err != nil {
		return s, err
	}
	s.Spec, s.Setup, s.Teardown = Summarize(spec), Summarize(setup), Summarize(teardown)
	if s.FinalWaitMs, err = FinalWaitMs(report); err != nil {
		return s, err
	}
	s.RunnerPeakMiB = ChildrenPeakRSSMiB()
	return s, nil
}
