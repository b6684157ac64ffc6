package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/internal/clusterflags"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision"
	"github.com/kubeproof/kubeproof/internal/tools/jsonout"
)

// providerCommand is a command that acts on the cluster the flags name.
func providerCommand(o *options, use, short string, act func(cmd *cobra.Command, p cluster.Provider) error) *cobra.Command {
	return commandWith(func(cmd *cobra.Command) (cluster.Provider, error) { return newProvider(cmd, o, printer()) }, use, short, act)
}

// commandWith is a command that acts on the provider that provider makes.
func commandWith(provider func(*cobra.Command) (cluster.Provider, error), use, short string, act func(cmd *cobra.Command, p cluster.Provider) error) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := provider(cmd)
			if err != nil {
				return err
			}
			return act(cmd, p)
		},
	}
}

// remover is the provider the flags name, for down: made as it is, without
// runner.NewProvider's removal of a cluster a killed kubeproof left (down
// removes it itself, and would then say it did not exist).
func remover(cmd *cobra.Command, o *options) (cluster.Provider, error) {
	req, err := request(cmd, o)
	if err != nil {
		return nil, err
	}
	req.Progress = printer()
	p, err := req.New()
	if err != nil {
		return nil, err
	}
	// Said as run says it: the user learns that a run was killed.
	if a, ok := p.(cluster.Abandoner); ok {
		if who, abandoned := a.Abandoned(); abandoned {
			req.Progress.Infof("the %s cluster here was left by %s, which was killed before it could remove it", p.Name(), who)
		}
	}
	return p, nil
}

func newUpCommand(o *options) *cobra.Command {
	cmd := providerCommand(o, "up", "Bring a cluster up (local: build what is missing, start every component, wait for the node to be Ready)",
		func(cmd *cobra.Command, p cluster.Provider) error {
			begin := time.Now()
			info, err := p.Up(cmd.Context())
			if err != nil {
				return err
			}
			printer().Infof("up in %s; use it with: eval $(kubeproof env --name %s)", progress.Round(time.Since(begin)), o.Shape.Name)
			fmt.Printf("KUBECONFIG=%s\n", info.Kubeconfig)
			return nil
		})
	addClusterFlags(cmd, o)
	return cmd
}

func newDownCommand(o *options) *cobra.Command {
	var all bool
	cmd := commandWith(func(cmd *cobra.Command) (cluster.Provider, error) { return remover(cmd, o) }, "down", "Remove a cluster and everything it left on this machine",
		func(cmd *cobra.Command, p cluster.Provider) error {
			if !all {
				return p.Down(cmd.Context())
			}
			l, ok := p.(cluster.Lister)
			if !ok {
				return exitcode.Errorf(exitcode.Usage, "--all: the %s provider makes no clusters on this machine", o.Provider)
			}
			names, err := l.Clusters()
			if err != nil {
				return fmt.Errorf("list %s clusters: %w", o.Provider, err)
			}
			if len(names) == 0 {
				printer().Infof("no %s cluster on this machine: nothing to remove", o.Provider)
				return nil
			}
			// Each is removed by a provider made for its name, as `down
			// --name` would: its state file says what it was made with.
			for _, name := range names {
				o.Shape.Name = name
				each, err := remover(cmd, o)
				if err != nil {
					return err
				}
				if err := each.Down(cmd.Context()); err != nil {
					return fmt.Errorf("remove %s cluster %q: %w", o.Provider, name, err)
				}
			}
			return nil
		})
	cmd.Flags().BoolVar(&all, "all", false, "remove every cluster of the provider on this machine (also ones a killed kubeproof left), not only --name")
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		if all && cmd.Flags().Changed("name") {
			return exitcode.Errorf(exitcode.Usage, "--all and --name: give one")
		}
		return nil
	}
	return cmd
}

func newStatusCommand(o *options) *cobra.Command {
	var output string
	cmd := providerCommand(o, "status", "Show whether the cluster is up and how its parts are",
		func(cmd *cobra.Command, p cluster.Provider) error {
			s, err := p.Status(cmd.Context())
			if err != nil {
				return err
			}
			if output == "json" {
				if err := writeJSON(cmd.OutOrStdout(), jsonout.NewStatus(o.Provider, o.Shape.Name, s)); err != nil {
					return err
				}
			} else {
				printStatus(s)
			}
			if !s.Up {
				return exitcode.Errorf(exitcode.Unreachable, "cluster %q is not up", o.Shape.Name)
			}
			return nil
		})
	addOutputFlag(cmd, &output)
	cmd.PreRunE = func(*cobra.Command, []string) error { return checkOutput(output) }
	return cmd
}

func newEnvCommand(o *options) *cobra.Command {
	return providerCommand(o, "env", "Print shell exports to use the cluster: eval $(kubeproof env)",
		func(cmd *cobra.Command, p cluster.Provider) error {
			info, err := p.Info(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Printf("export KUBECONFIG=%s\n", shellQuote(info.Kubeconfig))
			if f, ok := p.(cluster.InfoFiler); ok {
				fmt.Printf("export KUBEPROOF_CLUSTER_INFO=%s\n", shellQuote(f.InfoFile()))
			}
			if info.NodeRegistry != "" {
				fmt.Printf("export KUBEPROOF_NODE_REGISTRY=%s\n", shellQuote(info.NodeRegistry))
			}
			if info.Kubectl != "" {
				fmt.Printf("# kubectl %s: %s\n", info.KubernetesVersion, info.Kubectl)
			}
			return nil
		})
}

func newPrepareCommand(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "prepare",
		Short: "Install host packages, build Kubernetes and etcd, and pack our images, without starting a cluster",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return provision.Prepare(cmd.Context(), releases(o), printer())
		},
	}
	f := cmd.Flags()
	clusterflags.Releases(f, o, "Kubernetes release to build", "etcd release to build")
	return cmd
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
