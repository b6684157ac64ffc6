package incluster

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubeproof/kubeproof/contract/ownership"
	"github.com/kubeproof/kubeproof/kube/podsecurity"
	"github.com/kubeproof/kubeproof/kube/podsecurity/podsecuritytest"
)

// A report directory packed in the Pod comes out the same, without the
// spec runner's working copy of the binary.
func TestPackUnpack(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{"claims.json": `{"x":1}`, "logs/apiserver.log": "line\n", ".runner/kubeproof-specs.test": "binary"}
	for name, data := range files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := Pack(&buf, src); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	n, err := Unpack(&buf, dst)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("unpacked %d files, want 2", n)
	}
	for name, data := range files {
		got, err := os.ReadFile(filepath.Join(dst, name))
		switch {
		case strings.HasPrefix(name, ".runner/"):
			if err == nil {
				t.Errorf("%s was copied out", name)
			}
		case err != nil || string(got) != data:
			t.Errorf("%s = %q, %v; want %q", name, got, err, data)
		}
	}
}

// An archive cannot write outside the report directory, nor make links.
func TestUnpackRefusesWhatLeavesTheDirectory(t *testing.T) {
	for _, h := range []tar.Header{
		{Name: "../escape", Typeflag: tar.TypeReg, Mode: 0o644},
		{Name: "/etc/escape", Typeflag: tar.TypeReg, Mode: 0o644},
		{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
	} {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		tw.Close()
		dir := t.TempDir()
		if _, err := Unpack(&buf, dir); err == nil {
			t.Errorf("%s (%c) was unpacked", h.Name, h.Typeflag)
		}
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Errorf("%s left %v", h.Name, left)
		}
	}
}

// The Job's Pod passes the restricted Pod Security Standard (its namespace
// enforces it), and everything the run makes carries the run's label, so
// that `kubeproof cleanup --run` finds what a killed run left.
func TestObjects(t *testing.T) {
	n := namesOf("42")
	files, secrets, err := carry([]File{{Path: writeTemp(t, "claims.yaml", "x")}, {Path: writeTemp(t, "docker.json", "{}"), Secret: true}})
	if err != nil {
		t.Fatal(err)
	}
	job := n.job("registry.example/kubeproof@sha256:0", []string{"run"}, files, secrets, 600)
	podsecuritytest.Passes(t, "the in-cluster run's Pod", podsecurity.LevelRestricted, job.Spec.Template.ObjectMeta, job.Spec.Template.Spec)
	if got := n.namespaceObject().Labels[podsecurity.EnforceLabel]; got != string(podsecurity.LevelRestricted) {
		t.Errorf("the namespace enforces %q", got)
	}
	for what, labels := range map[string]map[string]string{
		"namespace": n.namespaceObject().Labels, "ClusterRole": n.clusterRole().Labels, "ClusterRoleBinding": n.clusterRoleBinding().Labels,
		"Job": job.Labels, "the Job's Pods": job.Spec.Template.Labels,
	} {
		// Not the run inside's ID: its specs wait for that run's
		// namespaces to go, and this one outlives them.
		if labels[ownership.Label] != "in-cluster-42" {
			t.Errorf("%s is not labelled %s=in-cluster-42: %v", what, ownership.Label, labels)
		}
	}
	// Every kind made outside the namespace is one cleanup looks for.
	for _, kind := range []string{"namespaces", "clusterroles", "clusterrolebindings"} {
		if !slices.ContainsFunc(ownership.Resources, func(r ownership.Resource) bool { return r.Resource == kind }) {
			t.Errorf("kubeproof cleanup does not look for %s", kind)
		}
	}
	// The user's files are where PodPath says.
	mounts := map[string]string{}
	for _, v := range job.Spec.Template.Spec.Volumes {
		switch {
		case v.ConfigMap != nil && v.ConfigMap.Name == filesConfigMap:
			for _, it := range v.ConfigMap.Items {
				mounts[FilesDir+"/"+it.Path] = it.Key
			}
		case v.Secret != nil:
			for _, it := range v.Secret.Items {
				mounts[SecretDir+"/"+it.Path] = it.Key
			}
		}
	}
	for secret, fs := range map[bool][]carried{false: files, true: secrets} {
		for _, f := range fs {
			in, _ := PodPath(f.local, secret)
			if mounts[in] != f.key {
				t.Errorf("%s is not at %s in the Pod (mounts %v)", f.local, in, mounts)
			}
		}
	}
}

func writeTemp(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
