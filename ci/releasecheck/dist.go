package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// platforms are the release's: the archives' OS and architecture.
var platforms = []struct{ os, arch string }{
	{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"},
}

// programs are what a linux archive carries besides kubeproof (the
// programs of its images and of the nodes kubeproof makes).
var programs = []string{
	"kubeproof-cni", "kubeproof-cni-trace", "kubeproof-pause", "kubeproof-runc", "kubeproof-testapp", "kubeproof-webhook",
}

func archiveName(version, goos, arch string) string {
	return fmt.Sprintf("kubeproof-%s-%s-%s.tar.gz", version, goos, arch)
}

func checkDist(dist, version, registry string) error {
	if version == "" || registry == "" {
		return errors.New("--version and --registry are required")
	}
	sums, err := checkSums(dist, version)
	if err != nil {
		return err
	}
	// linux/ARCH -> program -> its bytes, for the images' check.
	carried := map[string]map[string][]byte{}
	for _, p := range platforms {
		files, err := readArchive(filepath.Join(dist, archiveName(version, p.os, p.arch)))
		if err != nil {
			return err
		}
		if err := checkArchive(files, p.os, p.arch, version, registry); err != nil {
			return fmt.Errorf("%s: %w", archiveName(version, p.os, p.arch), err)
		}
		if p.os == "linux" {
			carried[p.arch] = files
		}
		fmt.Printf("releasecheck: %s: kubeproof for %s/%s stamped %s and %s, %d files\n",
			archiveName(version, p.os, p.arch), p.os, p.arch, version, registry, len(files))
	}
	if err := checkKrew(filepath.Join(dist, "krew", "kubeproof.yaml"), version, sums); err != nil {
		return err
	}
	fmt.Printf("releasecheck: krew/kubeproof.yaml: %s, the four archives with their checksums\n", version)
	return checkImages(registry, version, carried)
}

// checkSums reads SHA256SUMS: exactly the four archives, each sum holding.
func checkSums(dist, version string) (map[string]string, error) {
	f, err := os.Open(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			return nil, fmt.Errorf("SHA256SUMS: a line that is no checksum: %q", sc.Text())
		}
		sums[name] = sum
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var want []string
	for _, p := range platforms {
		want = append(want, archiveName(version, p.os, p.arch))
	}
	if got := slices.Sorted(func(yield func(string) bool) {
		for n := range sums {
			if !yield(n) {
				return
			}
		}
	}); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		return nil, fmt.Errorf("SHA256SUMS names %v, want %v", got, want)
	}
	for name, sum := range sums {
		data, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			return nil, err
		}
		if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != sum {
			return nil, fmt.Errorf("SHA256SUMS: %s does not hold", name)
		}
	}
	fmt.Printf("releasecheck: SHA256SUMS: the four archives, each sum holds\n")
	return sums, nil
}

// readArchive returns a tar.gz's regular files, by name.
func readArchive(path string) (map[string][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if h.Typeflag != tar.TypeReg || strings.Contains(h.Name, "/") {
			return nil, fmt.Errorf("%s: %s is not a file at the top level (krew's manifest and `tar -xz` expect them there)", path, h.Name)
		}
		if files[h.Name], err = io.ReadAll(tr); err != nil {
			return nil, err
		}
	}
}

// checkArchive: kubeproof for the platform, stamped; README and LICENSE;
// on linux the programs, built for it, and nothing else.
func checkArchive(files map[string][]byte, goos, arch, version, registry string) error {
	want := []string{"LICENSE", "README.md", "kubeproof"}
	if goos == "linux" {
		want = append(want, programs...)
	}
	got := slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	})
	if slices.Sort(want); !slices.Equal(got, want) {
		return fmt.Errorf("holds %v, want %v", got, want)
	}
	for _, name := range got {
		if !strings.HasPrefix(name, "kubeproof") {
			continue
		}
		if err := builtFor(files[name], goos, arch); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	// -trimpath keeps -ldflags out of the build info: the stamped strings
	// are looked for in the binary itself.
	for _, s := range []string{"v" + strings.TrimPrefix(version, "v"), registry} {
		if !bytes.Contains(files["kubeproof"], []byte(s)) {
			return fmt.Errorf("kubeproof is not stamped with %q", s)
		}
	}
	return nil
}

// builtFor checks an executable's format and architecture.
func builtFor(data []byte, goos, arch string) error {
	switch goos {
	case "linux":
		f, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("not a Linux executable: %w", err)
		}
		if want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]; f.Machine != want {
			return fmt.Errorf("built for %s, not %s", f.Machine, arch)
		}
	case "darwin":
		f, err := macho.NewFile(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("not a macOS executable: %w", err)
		}
		if want := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[arch]; f.Cpu != want {
			return fmt.Errorf("built for %s, not %s", f.Cpu, arch)
		}
	}
	return nil
}

// krewManifest is what this check reads of a krew plugin manifest.
type krewManifest struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version   string `json:"version"`
		Platforms []struct {
			URI      string `json:"uri"`
			SHA256   string `json:"sha256"`
			Bin      string `json:"bin"`
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
		} `json:"platforms"`
	} `json:"spec"`
}

func checkKrew(path, version string, sums map[string]string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var m krewManifest
	if err := yaml.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if m.Kind != "Plugin" || m.Metadata.Name != "kubeproof" || m.Spec.Version != version || len(m.Spec.Platforms) != len(platforms) {
		return fmt.Errorf("%s: plugin %q %s %q with %d platforms, want kubeproof %s with %d", path, m.Kind, m.Metadata.Name, m.Spec.Version, len(m.Spec.Platforms), version, len(platforms))
	}
	for _, p := range m.Spec.Platforms {
		labels := p.Selector.MatchLabels
		name := archiveName(version, labels["os"], labels["arch"])
		if !strings.HasSuffix(p.URI, "/"+name) || p.SHA256 != sums[name] || p.Bin != "kubeproof" {
			return fmt.Errorf("%s: the %s/%s platform has %s (sha256 %s, bin %s), want %s with %s", path, labels["os"], labels["arch"], p.URI, p.SHA256, p.Bin, name, sums[name])
		}
	}
	return nil
}
