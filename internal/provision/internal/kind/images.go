package kind

import (
	"fmt"
	"os"
	"slices"

	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"

	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/internal/progress"
)

// loadedImages are kubeproof's images a node image not ours gets loaded:
// all of them and the pod network's, but the workloads when the nodes are
// to pull those.
func loadedImages(skipWorkloads bool) []images.Image {
	var out []images.Image
	for _, img := range append(slices.Clone(images.All), images.CNI) {
		if !skipWorkloads || !images.IsWorkload(img) {
			out = append(out, img)
		}
	}
	return out
}

// removeImages deletes imgs from every node's containerd (its content
// goes with them, so a pull fetches every layer).
func removeImages(ns []nodes.Node, imgs []images.Image, pr *progress.Printer) (err error) {
	done := pr.Step("removing %d images from %d nodes (the nodes pull them)", len(imgs), len(ns))
	defer func() { done(err) }()
	args := []string{"--namespace=k8s.io", "images", "rm", "--sync"}
	for _, img := range imgs {
		args = append(args, img.Ref)
	}
	var g errgroup.Group
	for _, n := range ns {
		g.Go(func() error {
			if err := n.Command("ctr", args...).Run(); err != nil {
				return fmt.Errorf("remove images from node %s: %w", n, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// loadImages loads the image archives into every node, the nodes at once,
// into the given snapshotter (found on each node when empty).
func loadImages(ns []nodes.Node, archives []string, pr *progress.Printer) (err error) {
	done := pr.Step("loading %d images into %d nodes", len(archives), len(ns))
	defer func() { done(err) }()
	var g errgroup.Group
	for _, n := range ns {
		g.Go(func() error {
			for _, a := range archives {
				if err := loadImage(n, a); err != nil {
					return fmt.Errorf("load %s into node %s: %w", a, n, err)
				}
			}
			return nil
		})
	}
	return g.Wait()
}

func loadImage(n nodes.Node, archive string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	// kind's loader asks the node's containerd for its snapshotter.
	return nodeutils.LoadImageArchive(n, f)
}
