package nodeimage

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// nodeConfig is the node image's configuration: kind's entrypoint before
// systemd, and systemd's own stop signal.
func nodeConfig() v1.Config {
	return v1.Config{
		Entrypoint: []string{"/usr/local/bin/entrypoint", "/sbin/init"},
		Env:        []string{"container=docker", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		StopSignal: "SIGRTMIN+3",
	}
}

// load packs root as the single layer of image ref and streams it to
// `docker load` as a docker-archive. GNU tar packs the layer (it keeps
// hard links, devices, owners and extended attributes as they are); the
// archive around it is three entries, written here.
func load(ctx context.Context, dockerHost, ref, root, work string) error {
	layer := filepath.Join(work, "layer.tar")
	if err := run(ctx, "tar", "--numeric-owner", "--xattrs", "-C", root, "-cf", layer, "."); err != nil {
		return fmt.Errorf("pack node root filesystem: %w", err)
	}
	diffID, size, err := digestFile(layer)
	if err != nil {
		return err
	}
	cfg, err := json.Marshal(v1.ConfigFile{
		Architecture: runtime.GOARCH,
		OS:           "linux",
		Config:       nodeConfig(),
		RootFS:       v1.RootFS{Type: "layers", DiffIDs: []v1.Hash{{Algorithm: "sha256", Hex: diffID}}},
	})
	if err != nil {
		return fmt.Errorf("encode node image config: %w", err)
	}
	cfgSum := sha256.Sum256(cfg)
	cfgName := hex.EncodeToString(cfgSum[:]) + ".json"
	manifest, err := json.Marshal([]map[string]any{{"Config": cfgName, "RepoTags": []string{ref}, "Layers": []string{"layer.tar"}}})
	if err != nil {
		return fmt.Errorf("encode node image manifest: %w", err)
	}

	cmd := exec.CommandContext(ctx, "docker", "load")
	cmd.Env = dockerEnv(dockerHost)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("docker load: %w", err)
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("docker load: %w", err)
	}
	werr := writeArchive(stdin, manifest, cfgName, cfg, layer, size)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("docker load: %w: %s", err, strings.TrimSpace(out.String()))
	}
	if werr != nil {
		return fmt.Errorf("docker load: write archive: %w", werr)
	}
	return nil
}

func writeArchive(w io.Writer, manifest []byte, cfgName string, cfg []byte, layer string, size int64) error {
	tw := tar.NewWriter(w)
	for _, f := range []struct {
		name string
		data []byte
	}{{"manifest.json", manifest}, {cfgName, cfg}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Name: "layer.tar", Mode: 0o644, Size: size, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	f, err := os.Open(layer)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.Copy(tw, f); err != nil {
		return err
	}
	return tw.Close()
}

func digestFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, fmt.Errorf("digest %s: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("digest %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
