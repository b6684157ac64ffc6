package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision"
	"github.com/kubeproof/kubeproof/internal/runner"
)

// newDockerdCommand manages the private Docker daemon the kind provider uses
// on machines without a Docker engine of their own.
func newDockerdCommand(o *options) *cobra.Command {
	cmd := groupCommand("dockerd",
		"Run or stop kubeproof's private Docker daemon (for the kind provider on machines without Docker)",
		`dockerd manages a private Docker daemon: Debian's docker.io, installed on first use,
with its own socket (`+provision.PrivateDockerHost()+`), no iptables rules of its own, no IP
forwarding, and an OCI runtime that drops capabilities the machine cannot grant.
stop removes its containers and networks and undoes its changes to the machine;
its images stay in the cache directory.`)
	cmd.AddCommand(&cobra.Command{
		Use:   "start",
		Short: "Start the private Docker daemon (installs docker.io if missing)",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := provision.StartPrivateDocker(cmd.Context(), o.Shape.CacheDir, runner.Printer()); err != nil {
				return err
			}
			fmt.Printf("DOCKER_HOST=%s\n", provision.PrivateDockerHost())
			return nil
		},
	}, &cobra.Command{
		Use:   "stop",
		Short: "Stop it, remove its containers and networks, and undo its changes to the machine",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return provision.StopPrivateDocker(cmd.Context(), runner.Printer())
		},
	}, &cobra.Command{
		Use:   "status",
		Short: "Say whether it runs",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !provision.PrivateDockerRunning(cmd.Context()) {
				return exitcode.Errorf(exitcode.Unreachable, "the private Docker daemon is not running")
			}
			fmt.Printf("running; DOCKER_HOST=%s\n", provision.PrivateDockerHost())
			return nil
		},
	})
	return cmd
}
