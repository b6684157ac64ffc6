package nodeimage

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// metaDB makes a containerd metadata database with images per namespace,
// laid out as containerd keeps them (v1 / namespace / images / name, each
// image a bucket with its target).
func metaDB(t *testing.T, images map[string][]string) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "meta.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		v1, err := tx.CreateBucketIfNotExists([]byte("v1"))
		if err != nil {
			return err
		}
		for ns, names := range images {
			nsb, err := v1.CreateBucketIfNotExists([]byte(ns))
			if err != nil {
				return err
			}
			ib, err := nsb.CreateBucketIfNotExists([]byte("images"))
			if err != nil {
				return err
			}
			for _, n := range names {
				img, err := ib.CreateBucket([]byte(n))
				if err != nil {
					return err
				}
				target, err := img.CreateBucket([]byte("target"))
				if err != nil {
					return err
				}
				if err := target.Put([]byte("digest"), []byte("sha256:0")); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func probeTar(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: "kind/", Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The probe's output gives the version, systemd's major version, the CNI
// plugins and the kubelet namespace's images (not another namespace's).
func TestReadProbe(t *testing.T) {
	db := metaDB(t, map[string][]string{
		"k8s.io":  {"registry.k8s.io/kube-apiserver:v1.37.2", "registry.k8s.io/pause:3.10.1"},
		"default": {"docker.io/library/busybox:latest"},
	})
	c, err := readProbe(bytes.NewReader(probeTar(t, map[string][]byte{
		"kind/version":                    []byte("v1.37.2\n"),
		"etc/containerd/config.toml":      []byte("version = 2\n"),
		"tmp/kubeproof-probe/cni-plugins": []byte("host-local\nloopback\nptp\nportmap\n"),
		"tmp/kubeproof-probe/systemd":     []byte("systemd 257 (257.9-1~deb13u1)\n"),
		containerdMetadata:                db,
	})))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(c.Images)
	if c.KubernetesVersion != "v1.37.2" || c.Systemd != 257 || c.ContainerdConfig != "version = 2\n" ||
		!slices.Equal(c.CNIPlugins, []string{"host-local", "loopback", "ptp", "portmap"}) ||
		!slices.Equal(c.Images, []string{"registry.k8s.io/kube-apiserver:v1.37.2", "registry.k8s.io/pause:3.10.1"}) {
		t.Errorf("contents %+v", c)
	}
	// An image that is not a kind node: the probe finds nothing.
	c, err = readProbe(bytes.NewReader(probeTar(t, nil)))
	if err != nil || c.KubernetesVersion != "" || c.Systemd != 0 || len(c.Images) != 0 {
		t.Errorf("empty probe: %+v, %v", c, err)
	}
	if _, err := readProbe(bytes.NewReader([]byte("not a tar stream, long enough to have a header block........"))); err == nil {
		t.Error("garbage: no error")
	}
}

func TestSystemdVersion(t *testing.T) {
	for line, want := range map[string]int{
		"systemd 252 (252.22-1~deb12u1)": 252,
		"systemd 255 (255.4-1ubuntu8.4)": 255,
		"":                               0,
		"sh: systemd: not found":         0,
	} {
		if got := systemdVersion(line); got != want {
			t.Errorf("systemdVersion(%q) = %d, want %d", line, got, want)
		}
	}
}
