package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/framework/images"
	"github.com/kubeproof/kubeproof/internal/cli/clusterflags"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision/binaries"
	"github.com/kubeproof/kubeproof/internal/provision/debpkg"
	"github.com/kubeproof/kubeproof/internal/provision/imagebuild"
	"github.com/kubeproof/kubeproof/internal/provision/releases"
)

// providerCommand is a command that acts on the cluster the flags name.
func providerCommand(o *options, use, short string, act func(cmd *cobra.Command, p cluster.Provider) error) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := newProvider(cmd, o, printer())
			if err != nil {
				return err
			}
			return act(cmd, p)
		},
	}
}

func newUpCommand(o *options) *cobra.Command {
	cmd := providerCommand(o, "up", "Bring a cluster up (local: build what is missing, start every component, wait for the node to be Ready)",
		func(cmd *cobra.Command, p cluster.Provider) error {
			begin := time.Now()
			info, err := p.Up(cmd.Context())
			if err != nil {
				return err
			}
			printer().Infof("up in %s; use it with: eval $(kubeproof env --name %s)", progress.Round(time.Since(begin)), o.name)
			fmt.Printf("KUBECONFIG=%s\n", info.Kubeconfig)
			return nil
		})
	addClusterFlags(cmd, o)
	return cmd
}

func newDownCommand(o *options) *cobra.Command {
	return providerCommand(o, "down", "Remove a cluster and everything it left on this machine",
		func(cmd *cobra.Command, p cluster.Provider) error { return p.Down(cmd.Context()) })
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
				if err := writeJSON(cmd.OutOrStdout(), statusDoc(o.provider, o.name, s)); err != nil {
					return err
				}
			} else {
				printStatus(s)
			}
			if !s.Up {
				return exitcode.Errorf(exitcode.Unreachable, "cluster %q is not up", o.name)
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
			pr := printer()
			if err := debpkg.Ensure(cmd.Context(), debpkg.LocalCluster, pr); err != nil {
				return err
			}
			set, err := binaries.Ensure(cmd.Context(), binaries.Options{
				KubernetesVersion: o.kubernetesVersion, EtcdVersion: o.etcdVersion, CacheDir: o.cacheDir, Progress: pr,
			})
			if err != nil {
				return err
			}
			pr.Infof("Kubernetes binaries in %s, etcd in %s", set.KubernetesDir, set.EtcdDir)
			dir, err := imagebuild.ProgramDir()
			if err != nil {
				return err
			}
			for _, img := range images.All {
				tar, err := imagebuild.Build(img, dir, o.cacheDir)
				if err != nil {
					return err
				}
				pr.Infof("image %s in %s", img.Ref, tar)
			}
			return nil
		},
	}
	f := cmd.Flags()
	releaseFlags(f, &o.kubernetesVersion, &o.etcdVersion, "Kubernetes release to build", "etcd release to build")
	return cmd
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print kubeproof's version and the Kubernetes version it runs by default",
		Args:  usageArgs(cobra.NoArgs),
		Run: func(*cobra.Command, []string) {
			fmt.Println(versionLine())
		},
	}
}

// versionLine is what `kubeproof version` and `kubeproof --version` print.
func versionLine() string {
	return fmt.Sprintf("kubeproof %s (Kubernetes %s, etcd %s by default)", version(), releases.DefaultKubernetesVersion, releases.EtcdVersionFor(releases.DefaultKubernetesVersion))
}

// releaseFlags are --kubernetes-version and --etcd-version; an empty etcd
// version means the one that goes with the Kubernetes release.
func releaseFlags(f *pflag.FlagSet, kubernetes, etcd *string, kubernetesHelp, etcdHelp string) {
	f.StringVar(kubernetes, clusterflags.KubernetesVersion.Name, releases.DefaultKubernetesVersion,
		kubernetesHelp+" (tested: "+strings.Join(releases.SupportedKubernetesMinors(), ", ")+")")
	f.StringVar(etcd, clusterflags.EtcdVersion.Name, "", etcdHelp+" (default: the release that goes with --"+clusterflags.KubernetesVersion.Name+", "+
		releases.EtcdVersionFor(releases.DefaultKubernetesVersion)+" for "+releases.DefaultKubernetesVersion+")")
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
