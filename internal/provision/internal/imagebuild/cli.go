package imagebuild

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/kubeproof/kubeproof/internal/exitcode"
)

// CLIBinDir is where kubeproof's own image keeps its programs: kubeproof
// finds the programs of the images it runs beside itself.
const CLIBinDir = "/usr/local/bin"

// caBundle is Debian's bundle of certificate authorities: the image pushes
// to, and its kubectl reaches, servers whose certificates they sign.
const caBundle = "/etc/ssl/certs/ca-certificates.crt"

// CLI is kubeproof's own image, to check a cluster through a kubeconfig
// from a container: kubeproof with the programs its images carry (every
// kubeproof* program of programDir, which holds kubeproof itself), and the
// kubectl that the specs run. It runs `kubeproof run --provider
// kubeconfig` with the kubeconfig at /kubeconfig and reports in /reports,
// unless given other arguments.
func CLI(programDir, kubectl string) (v1.Image, error) {
	files := []File{{Path: "/tmp/", Mode: 0o1777}, {Path: "/reports/", Mode: 0o777}, {Path: "/usr/", Mode: 0o755},
		{Path: "/usr/local/", Mode: 0o755}, {Path: CLIBinDir + "/", Mode: 0o755}}
	entries, err := os.ReadDir(programDir)
	if err != nil {
		return nil, fmt.Errorf("read the program directory: %w", err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "kubeproof") && e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	if !containsName(names, "kubeproof") {
		return nil, exitcode.Errorf(exitcode.MissingTool, "kubeproof is not in %s (make build puts it there)", programDir)
	}
	add := func(path, name string) error {
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		files = append(files, File{Path: CLIBinDir + "/" + name, Mode: 0o755, Data: data})
		return nil
	}
	for _, n := range names {
		if err := add(filepath.Join(programDir, n), n); err != nil {
			return nil, err
		}
	}
	if err := add(kubectl, "kubectl"); err != nil {
		return nil, err
	}
	if data, err := os.ReadFile(caBundle); err == nil {
		files = append(files, File{Path: "/etc/", Mode: 0o755}, File{Path: "/etc/ssl/", Mode: 0o755},
			File{Path: "/etc/ssl/certs/", Mode: 0o755}, File{Path: caBundle, Mode: 0o644, Data: data})
	}
	return Compose([][]File{files}, v1.Config{
		Entrypoint: []string{CLIBinDir + "/kubeproof"},
		Cmd:        []string{"run", "--provider", "kubeconfig", "--report-dir", "/reports"},
		Env:        []string{"PATH=" + CLIBinDir, "HOME=/tmp", "KUBECONFIG=/kubeconfig"},
		WorkingDir: "/tmp",
	})
}

func containsName(names []string, n string) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}
