package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubeproof/kubeproof/internal/buildinfo"
	"github.com/kubeproof/kubeproof/internal/clusterflags"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision"
	"github.com/kubeproof/kubeproof/internal/report"
	"github.com/kubeproof/kubeproof/internal/runner"
	"github.com/kubeproof/kubeproof/internal/tools/incluster"
)

// addInClusterFlags are run's flags for a run inside the cluster: the
// user's --in-cluster, and the hidden flag of the run kubeproof starts
// there.
func addInClusterFlags(cmd *cobra.Command, r *runOptions) {
	f := cmd.Flags()
	f.BoolVar(&r.inCluster, "in-cluster", false, "run the specs in a Pod of the cluster (a Job with a ServiceAccount of its own), stream their output, copy the report directory back and remove what was made; kubeproof's image goes to --image-registry, or into the nodes of a cluster kubeproof made")
	f.StringVar(&r.inClusterJob, "in-cluster-job", "", "the run in the cluster that --in-cluster starts: what the run outside knew of the cluster")
	_ = f.MarkHidden("in-cluster-job")
}

// The flags of run as a run inside the cluster takes them: as they are
// (forwarded), naming a file to carry in (carriedFlags), or only for the
// run outside. Any other flag given is refused with --in-cluster, never
// silently dropped.
var (
	forwardedFlags = []string{"claims", "label-filter", "focus", "skip", "verbose", "timeout", "parallel", "flake-attempts",
		"poll-progress-after", "ginkgo-arg", "fail-on-refuted", "junit-refuted-as", "image-registry", "insecure-registry"}
	carriedFlags = []string{"claims-file", "document", "image-pull-secret"}
	outsideFlags = []string{"in-cluster", "keep", "report-dir", "rerun-failed", "dry-run", "output"}
)

// inClusterOptions are the options of a run --in-cluster starts (none
// without the flag), checked before anything is planned.
func (r *runOptions) inClusterOptions(cmd *cobra.Command, o *options) (incluster.Options, error) {
	if !r.inCluster {
		return incluster.Options{}, nil
	}
	return inClusterArgs(cmd, o, r)
}

// execute runs the plan here, through a Job in the cluster (--in-cluster,
// whose options in holds), or as that Job's run (--in-cluster-job).
func execute(ctx context.Context, r *runOptions, in incluster.Options, plan runner.Plan) (rep report.Report, err error) {
	switch {
	case r.inClusterJob != "":
		return incluster.Agent(ctx, r.inClusterJob, plan)
	case r.inCluster:
		if in, err = r.withPlan(in, plan); err != nil {
			return rep, err
		}
		return incluster.Run(ctx, in)
	}
	return runner.Run(ctx, plan)
}

// inClusterArgs turns run's flags into a run inside the cluster, before
// anything is planned: the arguments of `kubeproof run` there (with the
// run's Ginkgo seed, which names it) and the user's files it reads. A
// flag the run inside would not honour is a usage error.
func inClusterArgs(cmd *cobra.Command, o *options, r *runOptions) (incluster.Options, error) {
	in := incluster.Options{Tag: buildinfo.ImageTag()}
	if r.inClusterJob != "" {
		return in, exitcode.Errorf(exitcode.Usage, "--in-cluster-job is the run that --in-cluster starts, not a flag of its own")
	}
	// A cluster kubeproof makes gets kubeproof's image loaded into its
	// nodes; one it did not make pulls it.
	if p, err := provision.Lookup(o.Provider); err == nil && !p.Makes && o.Shape.ImageRegistry == "" {
		return in, exitcode.Errorf(exitcode.Usage, "--in-cluster on a cluster kubeproof did not make needs --image-registry: a registry its nodes pull kubeproof's own image from (`kubeproof registry serve` runs one on this machine)")
	}
	args := []string{"run", "--in-cluster-job=" + incluster.JobFile, "--provider=kubeconfig", "--report-dir=" + incluster.ReportDir}
	var bad error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if bad != nil {
			return
		}
		switch {
		case slices.Contains(forwardedFlags, f.Name):
			if f.Name == "label-filter" && r.rerunFailed != "" {
				return // the plan's filter stands for both (withPlan)
			}
			for _, v := range values(f) {
				args = append(args, "--"+f.Name+"="+v)
			}
		case slices.Contains(carriedFlags, f.Name):
			for _, v := range values(f) {
				secret := f.Name == "image-pull-secret"
				if _, err := os.Stat(v); err != nil && f.Name == "document" {
					args = append(args, "--document="+v) // a document of the catalog, by name
					continue
				}
				path, err := incluster.PodPath(v, secret)
				if err != nil {
					bad = err
					return
				}
				in.Files = append(in.Files, incluster.File{Path: v, Secret: secret})
				args = append(args, "--"+f.Name+"="+path)
			}
		case slices.Contains(outsideFlags, f.Name) || isClusterFlag(f.Name):
		default:
			bad = exitcode.Errorf(exitcode.Usage, "--%s does not go with --in-cluster", f.Name)
		}
	})
	if bad != nil {
		return in, bad
	}
	in.RunID = seedOf(r.specs.GinkgoArgs)
	if in.RunID == "" {
		in.RunID = strconv.FormatInt(rand.Int64N(1<<31-1)+1, 10)
		args = append(args, "--ginkgo-arg=seed="+in.RunID)
	}
	in.Args = args
	return in, nil
}

// withPlan completes a run inside the cluster with what planning found:
// the failed specs of --rerun-failed, the files the claims file's probes
// apply.
func (r *runOptions) withPlan(in incluster.Options, plan runner.Plan) (incluster.Options, error) {
	in.Plan = plan
	if r.rerunFailed != "" && plan.Filter != "" {
		in.Args = append(in.Args, "--label-filter="+plan.Filter)
	}
	files, err := probeFiles(plan)
	in.Files = append(in.Files, files...)
	return in, err
}

// values are a flag's values as given: each of a repeatable flag's.
func values(f *pflag.Flag) []string {
	if s, ok := f.Value.(pflag.SliceValue); ok {
		return s.GetSlice()
	}
	return []string{f.Value.String()}
}

func isClusterFlag(name string) bool {
	return slices.ContainsFunc(clusterflags.All, func(f clusterflags.Flag) bool { return f.Name == name })
}

// seedOf is the seed a --ginkgo-arg gives ("" if none).
func seedOf(ginkgoArgs []string) string {
	for _, a := range ginkgoArgs {
		if v, ok := strings.CutPrefix(a, "seed="); ok {
			return v
		}
	}
	return ""
}

// probeFiles are the files the probes of the user's claims file apply, by
// their path relative to it (which holds in the Pod too).
func probeFiles(plan runner.Plan) ([]incluster.File, error) {
	var out []incluster.File
	for _, p := range plan.Catalog.Probes {
		if p.Path == "" {
			continue // the built-in catalog's, in the binary
		}
		for _, s := range p.Steps {
			if s.Apply == nil || s.Apply.File == "" {
				continue
			}
			if filepath.IsAbs(s.Apply.File) {
				return nil, exitcode.Errorf(exitcode.Usage, "--in-cluster: probe %s applies %s by an absolute path, which the Pod does not have: give it relative to the claims file", p.ID, s.Apply.File)
			}
			out = append(out, incluster.File{Path: filepath.Join(filepath.Dir(p.Path), s.Apply.File)})
		}
	}
	return out, nil
}

// newReportPackCommand is `kubeproof report pack DIR`, which the run outside
// executes in the Pod of a run inside the cluster to copy its reports out.
func newReportPackCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "pack DIR",
		Short:  "Write a report directory to stdout as a tar archive (for run --in-cluster)",
		Hidden: true,
		Args:   usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := incluster.Pack(cmd.OutOrStdout(), args[0]); err != nil {
				return fmt.Errorf("report pack: %w", err)
			}
			return nil
		},
	}
}
