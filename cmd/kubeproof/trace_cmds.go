package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/report/chart"
	"github.com/kubeproof/kubeproof/internal/runner"
	"github.com/kubeproof/kubeproof/internal/tools/trace"
)

type traceOptions struct {
	file    string
	repeat  int
	output  string
	chart   string
	timeout time.Duration
	keep    bool
}

func newTraceCommand(o *options) *cobra.Command {
	t := &traceOptions{}
	cmd := &cobra.Command{
		Use:   "trace -f FILE",
		Short: "Apply a Pod or Deployment manifest and time each stage from the request to a ready endpoint",
		Long: `trace applies the manifest with kubectl, in a namespace of its own (with kubeproof's
recorder webhook and a Service in front of the Pods), and prints, per stage, the
milliseconds since the API server received the create: authenticated and authorized,
admitted, persisted (201), ReplicaSet and Pod created, bound, the kubelet's first request,
sandbox created, containers running, Ready, endpoint ready. Each time comes from the most
precise source that records it (the audit log in microseconds, the webhook's arrival,
the container runtime), and the table says which.

With --repeat N the manifest is applied N times, each in a fresh namespace, and the table
gives each stage's p50, p90 and p99. A cluster the provider has to bring up is removed
afterwards unless --keep is given.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if t.file == "" {
				return exitcode.Errorf(exitcode.Usage, "trace needs -f FILE (a Pod or Deployment manifest)")
			}
			if t.repeat < 1 {
				return exitcode.Errorf(exitcode.Usage, "--repeat %d: want 1 or more", t.repeat)
			}
			if t.output != "table" && t.output != "json" {
				return exitcode.Errorf(exitcode.Usage, "--output %q: want table or json", t.output)
			}
			if ext := filepath.Ext(t.chart); t.chart != "" && ext != ".svg" && ext != ".html" {
				return exitcode.Errorf(exitcode.Usage, "--chart %q: want a .svg or .html file", t.chart)
			}
			manifest, err := os.ReadFile(t.file)
			if err != nil {
				return exitcode.Errorf(exitcode.Usage, "-f %s: %v", t.file, err)
			}
			if err := trace.CheckManifest(manifest); err != nil {
				return exitcode.Errorf(exitcode.Usage, "-f %s: %v", t.file, err)
			}
			req, err := request(cmd, o)
			if err != nil {
				return err
			}
			req.Shape.Ephemeral = !t.keep
			p, err := runner.NewProvider(cmd.Context(), req, printer())
			if err != nil {
				return err
			}
			info, down, _, err := runner.ClusterFor(cmd.Context(), req, p, t.keep)
			if err != nil {
				return err
			}
			defer func() {
				if derr := down(); derr != nil && err == nil {
					err = derr
				}
			}()
			res, err := trace.Trace(cmd.Context(), trace.Options{
				Info: info, Manifest: manifest, File: filepath.Base(t.file), Repeat: t.repeat, Timeout: t.timeout, Progress: printer(),
			})
			if err != nil {
				return err
			}
			if t.output == "json" {
				err = trace.WriteJSON(os.Stdout, res)
			} else {
				err = trace.WriteTable(os.Stdout, res)
			}
			if err != nil {
				return err
			}
			if t.chart != "" {
				content := chart.Document(trace.Chart(res))
				if strings.HasSuffix(t.chart, ".html") {
					content = trace.HTML(res)
				}
				if err := os.WriteFile(t.chart, []byte(content), 0o644); err != nil {
					return fmt.Errorf("write chart: %w", err)
				}
				printer().Infof("chart: %s", t.chart)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&t.file, "filename", "f", "", "the manifest to apply: one Pod or one Deployment (e.g. fixtures/pod.yaml)")
	f.IntVar(&t.repeat, "repeat", 1, "apply it this many times and give each stage's p50, p90 and p99")
	f.StringVarP(&t.output, "output", "o", "table", "table or json")
	f.StringVar(&t.chart, "chart", "", "also draw the timeline into this .svg or .html file")
	f.DurationVar(&t.timeout, "timeout", 3*time.Minute, "per run: how long to wait for Ready Pods and ready endpoints")
	f.BoolVar(&t.keep, "keep", false, "leave a cluster this command brought up running afterwards")
	addClusterFlags(cmd, o)
	return cmd
}
