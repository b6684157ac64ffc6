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
	var shapedRate, rate string
	serve := &cobra.Command{
		Use:   "serve",
		Short: "Serve a plain-HTTP OCI registry until interrupted",
		Long: `serve runs an OCI distribution registry (go-containerregistry's) over plain HTTP on each
--listen address, blobs on disk in --dir, manifests in memory: what it holds lasts as
long as it runs. It is for clusters on this machine that pull kubeproof's images
(kubeproof image push --registry ADDR --insecure), and for air-gapped ones to mirror
from. Listen only on addresses of this machine: 127.0.0.1, and the bridge address a
kind network's nodes reach the host on. --read-only refuses every push (405); -v logs every request.
--access-log appends every answered request to a file as a JSON line (client, path,
status, bytes, start and duration); --shaped-listen serves the same registry on more
addresses at most --shaped-rate bytes per second (e.g. 512k, 4M): a slow link made by
the server, with no change to the machine's interfaces (--rate slows the --listen
addresses too). The local and kind providers run one beside each cluster they make, for
the specs about pulling images (docs/local-provider.md).`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(ro.Listen) == 0 {
				return exitcode.Errorf(exitcode.Usage, "--listen is required")
			}
			if rate != "" {
				r, err := provision.ParseRate(rate)
				if err != nil {
					return exitcode.Errorf(exitcode.Usage, "--rate %q: want bytes per second, as 512k or 4M", rate)
				}
				ro.Rate = r
			}
			if len(ro.Shaped) > 0 {
				rate, err := provision.ParseRate(shapedRate)
				if err != nil || rate == 0 {
					return exitcode.Errorf(exitcode.Usage, "--shaped-rate %q: want bytes per second above 0, as 512k or 4M", shapedRate)
				}
				ro.ShapedRate = rate
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
	f.StringVar(&ro.AccessLog, "access-log", "", "append every answered request to this file, one JSON line each")
	f.StringSliceVar(&ro.Shaped, "shaped-listen", nil, "address to serve at most --shaped-rate bytes per second, host:port (repeatable)")
	f.StringVar(&shapedRate, "shaped-rate", "", "bytes per second the --shaped-listen addresses send at most (e.g. 512k, 4M)")
	f.StringVar(&rate, "rate", "", "bytes per second the --listen addresses send at most (default: as fast as they can)")
	cmd.AddCommand(serve)
	return cmd
}
