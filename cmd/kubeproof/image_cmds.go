package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/internal/buildinfo"
	"github.com/kubeproof/kubeproof/internal/clusterflags"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision"
	"github.com/kubeproof/kubeproof/internal/runner"
)

// newImageCommand groups the commands that make images.
func newImageCommand(o *options) *cobra.Command {
	cmd := groupCommand("image", "Build images kubeproof needs", "")
	build := &cobra.Command{
		Use:   "build-node",
		Short: "Build kind's node image offline (Debian or Ubuntu root filesystem, Kubernetes from Go modules) and load it into Docker",
		Long: `build-node makes the kind node image from the machine's apt source and Go modules only:
no registry is contacted. The root filesystem is Debian bookworm from the machine's
Debian mirror (or --debian-mirror), or, on Ubuntu, the machine's own Ubuntu release
from its archive. The image is tagged with a digest of its inputs and reused while they
stay the same; one line on stderr says whether it was built or found, and from what.
Docker is the one $DOCKER_HOST names, else kubeproof's private daemon if it runs, else
/var/run/docker.sock.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			host, err := provision.DockerHost(cmd.Context())
			if err != nil {
				return err
			}
			ref, err := provision.NodeImage(cmd.Context(), releases(o), host, o.Kind.DebianMirror, runner.Printer())
			if err != nil {
				return err
			}
			fmt.Println(ref)
			return nil
		},
	}
	f := build.Flags()
	clusterflags.Releases(f, o, "Kubernetes release of the node", "etcd release of the node's etcd image")
	clusterflags.DebianMirror.Add(f, o)
	cmd.AddCommand(build, newImageListCommand(o), newImagePushCommand(o), newImageBuildCLICommand(o))
	return cmd
}

func newImageBuildCLICommand(o *options) *cobra.Command {
	var output, tag string
	cmd := &cobra.Command{
		Use:   "build-cli",
		Short: "Build kubeproof's own container image (kubeproof, its images' programs, kubectl) as a docker archive",
		Long: `build-cli writes kubeproof's own image, for checking a cluster through a kubeconfig from a
container, as a docker archive (docker load -i FILE):

  docker run --rm --network host -v $KUBECONFIG:/kubeconfig:ro -v $PWD/report:/reports IMAGE \
    run --provider kubeconfig --image-registry REGISTRY --report-dir /reports

It holds this kubeproof, the programs of the images the specs run, and kubectl of
--kubernetes-version (built from Go modules, cached). Without arguments the image runs
` + "`kubeproof run --provider kubeconfig --report-dir /reports`" + `.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := provision.CLIImage(cmd.Context(), releases(o), output, tag, runner.Printer()); err != nil {
				return err
			}
			fmt.Printf("%s\t%s\n", tag, output)
			return nil
		},
	}
	f := cmd.Flags()
	// --archive, not -o: -o is an output format on every command.
	f.StringVar(&output, "archive", "kubeproof-image.tar", "the docker archive to write")
	f.StringVar(&tag, "tag", "kubeproof/kubeproof:"+version(), "the image's name in the archive")
	clusterflags.Releases(f, o, "Kubernetes release of the image's kubectl", "etcd release (not in the image)")
	return cmd
}

func newImageListCommand(o *options) *cobra.Command {
	var registry, tag string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the images the specs run, with their digests (built from this binary's programs)",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			built, err := provision.Workloads(o.Shape.CacheDir)
			if err != nil {
				return err
			}
			for _, b := range built {
				ref := b.Image.Ref
				if registry != "" {
					ref = images.InRegistry(b.Image, registry, tag)
				}
				fmt.Printf("%s\t%s\n", ref, b.Digest)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&registry, "registry", "", "show the images' names in this registry (as `image push` puts them)")
	cmd.Flags().StringVar(&tag, "tag", buildinfo.ImageTag(), "their tag there")
	return cmd
}

func newImagePushCommand(o *options) *cobra.Command {
	var p provision.Publish
	var platforms []string
	cmd := &cobra.Command{
		Use:   "push --registry REG",
		Short: "Push the images the specs run to a registry your nodes pull from",
		Long: `push puts the images the specs run (the test app, the webhook server) into the registry,
as REG/testapp:TAG and REG/webhook:TAG (TAG: this kubeproof's version), unless they are
there with the same digest. Each is an index of one image per --platform, whose programs
are beside kubeproof (this machine's platform), under --programs (linux_ARCH/, as the
release build lays them out), or built once from kubeproof's module source (Go needed).
Credentials come from the Docker config ($DOCKER_CONFIG, ~/.docker/config.json); --insecure
allows a registry that speaks plain HTTP. Then check your cluster with
kubeproof run --kubeconfig FILE --image-registry REG, or, with the images there already,
` + provision.RegistryEnv + `=REG kubeproof run --kubeconfig FILE.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if p.Registry == "" {
				return exitcode.Errorf(exitcode.Usage, "--registry is required")
			}
			if buildinfo.Tag(p.Tag) != p.Tag {
				return exitcode.Errorf(exitcode.Usage, "--tag %q: a tag holds letters, digits, _, . and - (not first)", p.Tag)
			}
			for _, pl := range platforms {
				arch, ok := strings.CutPrefix(pl, "linux/")
				if !ok || (arch != "amd64" && arch != "arm64") {
					return exitcode.Errorf(exitcode.Usage, "--platform %q: want linux/amd64 or linux/arm64", pl)
				}
				p.Arches = append(p.Arches, arch)
			}
			return provision.PublishWorkloads(cmd.Context(), p, runner.Printer())
		},
	}
	f := cmd.Flags()
	f.StringVar(&p.Registry, "registry", "", "registry (host[:port][/path]) to push to")
	f.BoolVar(&p.Insecure, "insecure", false, "the registry speaks plain HTTP")
	f.StringVar(&p.Tag, "tag", buildinfo.ImageTag(), "the images' tag (a run finds them by this binary's version)")
	f.StringSliceVar(&platforms, "platform", []string{"linux/" + buildinfo.Arch()}, "platforms of each image: linux/amd64, linux/arm64 (repeatable)")
	f.StringVar(&p.Programs, "programs", "", "directory with each platform's programs in linux_ARCH/ (default: beside kubeproof, else built from its module source)")
	return cmd
}

// releases are the releases the flags name, and where builds are cached.
func releases(o *options) provision.Releases {
	return provision.Releases{KubernetesVersion: o.Shape.KubernetesVersion, EtcdVersion: o.Shape.EtcdVersion, CacheDir: o.Shape.CacheDir}
}
