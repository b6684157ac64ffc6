package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const version = "v0.0.1-test"

// writeDist writes the four archives (each holding one file, name) and
// SHA256SUMS as goreleaser writes them; it returns the sums by archive.
func writeDist(t *testing.T, dir, name string) map[string]string {
	t.Helper()
	var lines []string
	sums := map[string]string{}
	for _, p := range platforms {
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gz)
		body := []byte(p.os + "/" + p.arch)
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(body); err != nil {
			t.Fatal(err)
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := gz.Close(); err != nil {
			t.Fatal(err)
		}
		archive := archiveName(version, p.os, p.arch)
		if err := os.WriteFile(filepath.Join(dir, archive), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(buf.Bytes())
		sums[archive] = hex.EncodeToString(sum[:])
		lines = append(lines, sums[archive]+"  "+archive)
	}
	if err := os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return sums
}

// SHA256SUMS holds for the archives as written, and no longer once one
// byte of one archive changes.
func TestCheckSums(t *testing.T) {
	dir := t.TempDir()
	writeDist(t, dir, "kubeproof")
	if _, err := checkSums(dir, version); err != nil {
		t.Fatalf("the sums of untouched archives: %v", err)
	}
	path := filepath.Join(dir, archiveName(version, "darwin", "arm64"))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 1
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := checkSums(dir, version); err == nil || !strings.Contains(err.Error(), "darwin-arm64.tar.gz does not hold") {
		t.Errorf("a changed archive: %v", err)
	}
}

// An archive's files are at its top: one in a folder is refused (krew's
// manifest names the binary bare).
func TestReadArchiveWantsTopLevel(t *testing.T) {
	dir := t.TempDir()
	writeDist(t, dir, "kubeproof")
	files, err := readArchive(filepath.Join(dir, archiveName(version, "linux", "amd64")))
	if err != nil || string(files["kubeproof"]) != "linux/amd64" {
		t.Fatalf("read %v, %v", files, err)
	}
	writeDist(t, dir, "kubeproof-"+version+"/kubeproof")
	if _, err := readArchive(filepath.Join(dir, archiveName(version, "linux", "amd64"))); err == nil {
		t.Error("an archive wrapped in a folder was taken")
	}
}

// builtFor tells a program's platform by its headers: this test's own
// binary is for this machine and for no other architecture.
func TestBuiltFor(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("the release is for linux and darwin")
	}
	if err := builtFor(data, runtime.GOOS, runtime.GOARCH); err != nil {
		t.Errorf("this binary: %v", err)
	}
	other := map[string]string{"amd64": "arm64", "arm64": "amd64"}[runtime.GOARCH]
	if err := builtFor(data, runtime.GOOS, other); err == nil {
		t.Errorf("this binary passed as %s", other)
	}
	wrongOS := map[string]string{"linux": "darwin", "darwin": "linux"}[runtime.GOOS]
	if err := builtFor(data, wrongOS, runtime.GOARCH); err == nil {
		t.Errorf("this binary passed as %s", wrongOS)
	}
}

// The krew manifest names each archive with its checksum; a platform
// whose checksum is another's is refused.
func TestCheckKrew(t *testing.T) {
	dir := t.TempDir()
	sums := writeDist(t, dir, "kubeproof")
	manifest := func(swap bool) string {
		var b strings.Builder
		fmt.Fprintf(&b, "apiVersion: krew.googlecontainertools.github.com/v1alpha2\nkind: Plugin\nmetadata:\n  name: kubeproof\nspec:\n  version: %s\n  platforms:\n", version)
		for i, p := range platforms {
			name := archiveName(version, p.os, p.arch)
			sum := sums[name]
			if swap && i == 0 {
				sum = sums[archiveName(version, platforms[1].os, platforms[1].arch)]
			}
			fmt.Fprintf(&b, "  - bin: kubeproof\n    uri: https://example.invalid/download/%s/%s\n    sha256: %s\n    selector:\n      matchLabels: {os: %s, arch: %s}\n", version, name, sum, p.os, p.arch)
		}
		return b.String()
	}
	path := filepath.Join(dir, "kubeproof.yaml")
	for _, c := range []struct {
		swap bool
		ok   bool
	}{{false, true}, {true, false}} {
		if err := os.WriteFile(path, []byte(manifest(c.swap)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := checkKrew(path, version, sums); (err == nil) != c.ok {
			t.Errorf("checksums swapped %v: %v", c.swap, err)
		}
	}
}

// A not-checkable reason is summed up by what the cluster lacked.
func TestLacking(t *testing.T) {
	for reason, want := range map[string]string{
		"provider kubeconfig lacks capability AuditLog: the API server's audit log is on a machine kubeproof does not control": "AuditLog",
		"spec kubelet-pull, which observes firstPull.inOrder, skipped: provider kubeconfig lacks capability RegistryPull: ...": "RegistryPull",
		"probe p requires NodeExec: kubeproof has no access to the nodes":                                                      "NodeExec",
		"the canary: kubeproof's images could not be pulled":                                                                   "kubeproof's images",
		"something else": "something else",
	} {
		if got := lacking(reason); got != want {
			t.Errorf("lacking(%q) = %q, want %q", reason, got, want)
		}
	}
}
