package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/internal/buildinfo"
	"github.com/kubeproof/kubeproof/internal/clusterflags"
)

func version() string { return buildinfo.Version() }

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print kubeproof's version, commit, Go release and platform, and the Kubernetes version it runs by default",
		Args:  usageArgs(cobra.NoArgs),
		Run: func(*cobra.Command, []string) {
			fmt.Println(versionLine())
		},
	}
}

// versionLine is what `kubeproof version` and `kubeproof --version` print:
// kubeproof v0.2.0 (commit 4a856e5, go1.26.0, darwin/arm64; Kubernetes
// v1.37.2, etcd v3.7.3 by default).
func versionLine() string {
	commit, dirty := strings.CutSuffix(buildinfo.Commit(), "-dirty")
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if dirty {
		commit += "-dirty"
	}
	if commit == "" {
		commit = "unknown"
	}
	return fmt.Sprintf("kubeproof %s (commit %s, %s, %s; %s by default)",
		version(), commit, buildinfo.GoVersion(), buildinfo.Platform(), clusterflags.DefaultReleases())
}
