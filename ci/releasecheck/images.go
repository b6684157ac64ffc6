package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/internal/buildinfo"
)

// checkImages: each image the specs run is in the registry at the
// release's version, an index of linux/amd64 and linux/arm64, each
// image's program the very file that platform's archive carries, at the
// path specs and probes run it by (/kubeproof-testapp).
func checkImages(registry, version string, carried map[string]map[string][]byte) error {
	for _, img := range images.Workloads {
		ref := images.InRegistry(img, registry, buildinfo.Tag(version))
		tag, err := name.NewTag(ref)
		if err != nil {
			return err
		}
		index, err := remote.Index(tag)
		if err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		manifest, err := index.IndexManifest()
		if err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
		var seen []string
		for _, m := range manifest.Manifests {
			if m.Platform == nil || m.Platform.OS != "linux" {
				return fmt.Errorf("%s: a manifest for %v", ref, m.Platform)
			}
			arch := m.Platform.Architecture
			seen = append(seen, "linux/"+arch)
			image, err := index.Image(m.Digest)
			if err != nil {
				return fmt.Errorf("%s for linux/%s: %w", ref, arch, err)
			}
			data, err := fileIn(image, img.Program)
			if err != nil {
				return fmt.Errorf("%s for linux/%s: %w", ref, arch, err)
			}
			if !bytes.Equal(data, carried[arch][img.Program]) {
				return fmt.Errorf("%s for linux/%s: /%s is not the %s of the linux/%s archive", ref, arch, img.Program, img.Program, arch)
			}
			cfg, err := image.ConfigFile()
			if err != nil {
				return err
			}
			if cfg.Architecture != arch || len(cfg.Config.Entrypoint) == 0 || cfg.Config.Entrypoint[0] != "/"+img.Program {
				return fmt.Errorf("%s for linux/%s: configured for %s, entrypoint %v", ref, arch, cfg.Architecture, cfg.Config.Entrypoint)
			}
		}
		if strings.Join(seen, " ") != "linux/amd64 linux/arm64" {
			return fmt.Errorf("%s: platforms %v, want linux/amd64 and linux/arm64", ref, seen)
		}
		digest, _ := index.Digest()
		fmt.Printf("releasecheck: %s: linux/amd64 and linux/arm64, /%s as the archives carry it (%s)\n", ref, img.Program, digest)
	}
	return nil
}

// fileIn returns the content of /path in the image's layers.
func fileIn(image v1.Image, path string) ([]byte, error) {
	layers, err := image.Layers()
	if err != nil {
		return nil, err
	}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			return nil, err
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rc.Close()
				return nil, err
			}
			if strings.TrimPrefix(h.Name, "/") == path {
				data, err := io.ReadAll(tr)
				rc.Close()
				return data, err
			}
		}
		rc.Close()
	}
	return nil, fmt.Errorf("no /%s in its layers", path)
}
