package nodeimage

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/kubeproof/kubeproof/internal/provision/internal/binaries"

	"github.com/kubeproof/kubeproof/internal/provision/internal/imagebuild"
	"github.com/kubeproof/kubeproof/internal/provision/internal/process"
)

// preload puts the component images into the node's containerd store
// (root/var/lib/containerd, namespace k8s.io) with the node's own containerd
// release run on this machine for the purpose, as kind's own builder does
// inside a build container. Images are imported unpacked-later (the node unpacks on first
// use) and pinned, so the kubelet's image GC never removes them.
func preload(ctx context.Context, bin binaries.Set, root, work string, comps []component, extra []archive) error {
	dir := filepath.Join(work, "images")
	archives := slices.Clone(extra)
	for i, c := range comps {
		img, err := c.image(root)
		if err != nil {
			return err
		}
		path := filepath.Join(dir, fmt.Sprintf("%02d.tar", i))
		if err := imagebuild.WriteArchive(path, c.Ref, img); err != nil {
			return err
		}
		archives = append(archives, archive{Ref: c.Ref, Path: path})
	}

	// A short socket path: unix socket paths are limited to 108 bytes.
	tmp, err := os.MkdirTemp("", "kp-node-ctr-")
	if err != nil {
		return fmt.Errorf("containerd for preloading: %w", err)
	}
	defer os.RemoveAll(tmp)
	sock := filepath.Join(tmp, "c.sock")
	cfg := fmt.Sprintf(`version = 3
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = %q
[ttrpc]
  address = %q
`, filepath.Join(root, "var/lib/containerd"), filepath.Join(tmp, "state"), sock, sock+".ttrpc")
	if err := os.WriteFile(filepath.Join(tmp, "config.toml"), []byte(cfg), 0o600); err != nil {
		return fmt.Errorf("containerd for preloading: %w", err)
	}
	proc, err := process.Start("containerd (node image preload)",
		[]string{bin.Path("containerd"), "--config", filepath.Join(tmp, "config.toml")}, filepath.Join(work, "containerd.log"), nil)
	if err != nil {
		return err
	}
	defer func() { _ = proc.Stop(10 * time.Second) }()
	ctr := func(args ...string) error {
		return run(ctx, bin.Path("ctr"), append([]string{"--address", sock, "--namespace", "k8s.io"}, args...)...)
	}
	if err := waitSocket(ctx, bin.Path("ctr"), sock, proc); err != nil {
		return err
	}
	for _, a := range archives {
		if err := ctr("images", "import", "--no-unpack", "--all-platforms", a.Path); err != nil {
			return fmt.Errorf("preload %s: %w", a.Ref, err)
		}
		if err := ctr("images", "label", a.Ref, "io.cri-containerd.pinned=pinned"); err != nil {
			return fmt.Errorf("pin %s: %w", a.Ref, err)
		}
	}
	if err := proc.Stop(10 * time.Second); err != nil {
		return fmt.Errorf("stop preloading containerd: %w", err)
	}
	return nil
}

// waitSocket waits for containerd's socket, or for it to exit.
func waitSocket(ctx context.Context, ctrPath, sock string, proc *process.Proc) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(sock); err == nil {
			if exec.CommandContext(ctx, ctrPath, "--address", sock, "version").Run() == nil {
				return nil
			}
		}
		select {
		case <-proc.Exited():
			return fmt.Errorf("preloading containerd exited (%v): %s", proc.Err(), process.Tail(proc.Log, 5))
		case <-ctx.Done():
			return fmt.Errorf("timed out waiting for the preloading containerd at %s: %s", sock, process.Tail(proc.Log, 5))
		case <-tick.C:
		}
	}
}
