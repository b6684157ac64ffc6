package nodeimage

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kubeproof/kubeproof/internal/exitcode"
)

// Contents is what a node image holds that the kind provider depends on,
// read from the image itself (Inspect): a node image kubeproof did not
// build in this run may be kind's own, another project's, or one of
// kubeproof's served by a registry under another name.
type Contents struct {
	// KubernetesVersion is the image's /kind/version ("" if missing).
	KubernetesVersion string
	// Systemd is systemd's major version (0: no systemd found).
	Systemd int
	// ContainerdConfig is /etc/containerd/config.toml ("" if missing).
	ContainerdConfig string
	// CNIPlugins are the programs in /opt/cni/bin.
	CNIPlugins []string
	// Images are the image names in the node's containerd store, in the
	// namespace the kubelet uses (k8s.io).
	Images []string
}

// ContainerdNamespace is the containerd namespace of the kubelet's images.
const ContainerdNamespace = "k8s.io"

// containerdMetadata is containerd's metadata database in a kind node (its
// default root); it names every image the node holds.
const containerdMetadata = "var/lib/containerd/io.containerd.metadata.v1.bolt/meta.db"

// probeScript runs in a container of the node image, as a plain program
// (no systemd, no network): it writes, as a tar stream on stdout, the files
// Inspect reads, and two it makes: the names in /opt/cni/bin and the
// first line of `systemd --version`. Missing files are left out.
const probeScript = `cd / && mkdir -p tmp/kubeproof-probe
ls -1 /opt/cni/bin/ > tmp/kubeproof-probe/cni-plugins 2>/dev/null
for s in /usr/lib/systemd/systemd /lib/systemd/systemd; do
  if [ -x "$s" ]; then "$s" --version 2>/dev/null | head -n 1 > tmp/kubeproof-probe/systemd; break; fi
done
exec tar -cf - --ignore-failed-read kind/version etc/containerd/config.toml ` + containerdMetadata + ` tmp/kubeproof-probe 2>/dev/null
`

// Inspect reads ref's Contents from a short-lived container of it in
// Docker at host (about a second).
func Inspect(ctx context.Context, host, ref string) (Contents, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	name := fmt.Sprintf("kubeproof-probe-%d", os.Getpid())
	cmd := exec.CommandContext(ctx, "docker", "run", "--rm", "--name", name, "--network", "none",
		"--entrypoint", "/bin/sh", ref, "-c", probeScript)
	cmd.Env = dockerEnv(host)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// --rm removes it; a cancelled docker CLI may leave it.
	rm := exec.CommandContext(context.WithoutCancel(ctx), "docker", "rm", "-f", name)
	rm.Env = dockerEnv(host)
	_ = rm.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && (exit.ExitCode() == 126 || exit.ExitCode() == 127) {
		// docker run's codes for a command that cannot run in the image.
		// docker's reason is its first line; the last one points to --help.
		reason, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		return Contents{}, exitcode.Errorf(exitcode.Usage, "--node-image %s is not a kind node image: a container of it cannot run /bin/sh (%s)", ref, strings.TrimPrefix(reason, "docker: "))
	}
	if err != nil {
		return Contents{}, fmt.Errorf("read node image %s (a container running /bin/sh in it): %w: %s", ref, err, lastLine(stderr.String()))
	}
	return readProbe(bytes.NewReader(out))
}

// readProbe reads the probe's tar stream.
func readProbe(r io.Reader) (Contents, error) {
	var c Contents
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return c, fmt.Errorf("read the node image probe's output: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return c, fmt.Errorf("read the node image probe's output: %w", err)
		}
		switch strings.TrimPrefix(h.Name, "./") {
		case "kind/version":
			c.KubernetesVersion = strings.TrimSpace(string(data))
		case "etc/containerd/config.toml":
			c.ContainerdConfig = string(data)
		case "tmp/kubeproof-probe/cni-plugins":
			c.CNIPlugins = strings.Fields(string(data))
		case "tmp/kubeproof-probe/systemd":
			c.Systemd = systemdVersion(string(data))
		case containerdMetadata:
			if c.Images, err = imageNames(data); err != nil {
				return c, err
			}
		}
	}
	return c, nil
}

var systemdRE = regexp.MustCompile(`^systemd (\d+)`)

// systemdVersion reads the major version from `systemd --version`'s first
// line ("systemd 252 (252.22-1~deb12u1)").
func systemdVersion(line string) int {
	m := systemdRE.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// imageNames lists the images of namespace k8s.io in a containerd
// metadata database (bolt: v1 / <namespace> / images / <name>).
func imageNames(db []byte) ([]string, error) {
	dir, err := os.MkdirTemp("", "kubeproof-meta-")
	if err != nil {
		return nil, fmt.Errorf("read the node image's containerd store: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "meta.db")
	if err := os.WriteFile(path, db, 0o600); err != nil {
		return nil, fmt.Errorf("read the node image's containerd store: %w", err)
	}
	b, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return nil, fmt.Errorf("read the node image's containerd store: %w", err)
	}
	defer b.Close()
	var names []string
	err = b.View(func(tx *bolt.Tx) error {
		images := bucket(tx, "v1", ContainerdNamespace, "images")
		if images == nil {
			return nil
		}
		return images.ForEach(func(k, v []byte) error {
			if v == nil { // each image is a bucket of its own
				names = append(names, string(k))
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read the node image's containerd store: %w", err)
	}
	return names, nil
}

func bucket(tx *bolt.Tx, path ...string) *bolt.Bucket {
	b := tx.Bucket([]byte(path[0]))
	for _, p := range path[1:] {
		if b == nil {
			return nil
		}
		b = b.Bucket([]byte(p))
	}
	return b
}

// Pull makes sure Docker at host has ref, pulling it when it has not; it
// reports whether it pulled.
func Pull(ctx context.Context, host, ref string) (bool, error) {
	if dockerHas(ctx, host, ref) {
		return false, nil
	}
	cmd := exec.CommandContext(ctx, "docker", "pull", "--quiet", ref)
	cmd.Env = dockerEnv(host)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return false, exitcode.Errorf(exitcode.Registry, "node image %s is not in Docker and pulling it failed: %s", ref, lastLine(string(out)))
	}
	return true, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
