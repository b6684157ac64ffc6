package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/internal/provision/nodeimage"
)

// newImageCommand groups the commands that make images.
func newImageCommand(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "image",
		Short: "Build images kubeproof needs",
	}
	build := &cobra.Command{
		Use:   "build-node",
		Short: "Build kind's node image offline (Debian root filesystem, Kubernetes from Go modules) and load it into Docker",
		Long: `build-node makes the kind node image from the machine's Debian mirror and Go modules only:
no registry is contacted. The image is tagged with a digest of its inputs and reused
while they stay the same. Docker is the one $DOCKER_HOST names, else kubeproof's
private daemon if it runs, else /var/run/docker.sock.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			host, err := dockerHost(cmd.Context())
			if err != nil {
				return err
			}
			ref, err := nodeimage.Ensure(cmd.Context(), nodeimage.Options{
				KubernetesVersion: o.kubernetesVersion, EtcdVersion: o.etcdVersion,
				CacheDir: o.cacheDir, DockerHost: host, Progress: printer(),
			})
			if err != nil {
				return err
			}
			fmt.Println(ref)
			return nil
		},
	}
	f := build.Flags()
	f.StringVar(&o.kubernetesVersion, "kubernetes-version", cluster.DefaultKubernetesVersion, "Kubernetes release of the node")
	f.StringVar(&o.etcdVersion, "etcd-version", cluster.DefaultEtcdVersion, "etcd release of the node's etcd image")
	cmd.AddCommand(build)
	return cmd
}
