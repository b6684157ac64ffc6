package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision/dockerd"
)

// newDockerdCommand manages the private Docker daemon the kind provider uses
// on machines without a Docker engine of their own.
func newDockerdCommand(o *options) *cobra.Command {
	cmd := groupCommand("dockerd",
		"Run or stop kubeproof's private Docker daemon (for the kind provider on machines without Docker)",
		`dockerd manages a private Docker daemon: Debian's docker.io, installed on first use,
with its own socket (`+dockerd.Host()+`), no iptables rules of its own, no IP
forwarding, and an OCI runtime that drops capabilities the machine cannot grant.
stop removes its containers and networks and undoes its changes to the machine;
its images stay in the cache directory.`)
	cmd.AddCommand(&cobra.Command{
		Use:   "start",
		Short: "Start the private Docker daemon (installs docker.io if missing)",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := dockerd.Start(cmd.Context(), o.cacheDir, printer()); err != nil {
				return err
			}
			fmt.Printf("DOCKER_HOST=%s\n", dockerd.Host())
			return nil
		},
	}, &cobra.Command{
		Use:   "stop",
		Short: "Stop it, remove its containers and networks, and undo its changes to the machine",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return dockerd.Stop(cmd.Context(), printer())
		},
	}, &cobra.Command{
		Use:   "status",
		Short: "Say whether it runs",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !dockerd.Running(cmd.Context()) {
				return exitcode.Errorf(exitcode.Unreachable, "the private Docker daemon is not running")
			}
			fmt.Printf("running; DOCKER_HOST=%s\n", dockerd.Host())
			return nil
		},
	})
	return cmd
}

// dockerHost is the Docker API commands use; without one it says how to
// get one.
func dockerHost(ctx context.Context) (string, error) {
	host, err := dockerd.Select(ctx)
	if err != nil {
		return "", err
	}
	if host == "" {
		return "", exitcode.Errorf(exitcode.MissingTool,
			"no Docker API: $DOCKER_HOST is unset and nothing answers at %s; start Docker, or run `kubeproof dockerd start` for a private daemon", dockerd.DefaultSocket)
	}
	return host, nil
}
