package main

import (
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision"
)

func newRegistryCommand(o *options) *cobra.Command {
	cmd := groupCommand("registry", "Serve an OCI registry on this machine (for clusters that pull kubeproof's images)", "")
	var ro provision.RegistryOptions
	serve := &cobra.Command{
		Use:   "serve",
		Short: "Serve a plain-HTTP OCI registry until interrupted",
		Long: `serve runs an OCI distribution registry (go-containerregistry's) over plain HTTP on each
--listen address, blobs on disk in --dir, manifests in memory: what it holds lasts as
long as it runs. It is for clusters on this machine that pull kubeproof's images
(kubeproof image push --registry ADDR --insecure), and for air-gapped ones to mirror
from. Listen only on addresses of this machine: 127.0.0.1, and the bridge address a
kind network's nodes reach the host on. --read-only refuses every push (405); -v logs every request.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(ro.Listen) == 0 {
				return exitcode.Errorf(exitcode.Usage, "--listen is required")
			}
			ro.Verbose = verbose(cmd)
			if ro.Dir == "" {
				ro.Dir = filepath.Join(o.Shape.CacheDir, "registry")
			}
			return provision.ServeRegistry(cmd.Context(), ro, printer())
		},
	}
	f := serve.Flags()
	f.StringSliceVar(&ro.Listen, "listen", nil, "address to listen on, host:port (repeatable)")
	f.StringVar(&ro.Dir, "dir", "", "directory for the blobs (default <cache-dir>/registry)")
	f.BoolVar(&ro.ReadOnly, "read-only", false, "refuse pushes")
	cmd.AddCommand(serve)
	return cmd
}
