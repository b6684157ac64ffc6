package kind

import (
	"archive/tar"
	"bytes"
	"io"
	"testing"
)

// The nodes unpack hostsArchive into containerd's config_path: each
// registry's hosts.toml must come out under its own directory, unchanged.
func TestHostsArchive(t *testing.T) {
	files := map[string]string{
		"kubeproof.local": "server = \"http://127.0.0.1:9\"\n",
		"127.0.0.1:5001":  "server = \"http://172.18.0.1:5001\"\n",
	}
	data, err := hostsArchive(files)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		got[h.Name] = string(body)
	}
	for host, want := range files {
		if got[host+"/hosts.toml"] != want {
			t.Errorf("%s/hosts.toml = %q, want %q", host, got[host+"/hosts.toml"], want)
		}
	}
	if len(got) != len(files) {
		t.Errorf("archive holds %d files, want %d: %v", len(got), len(files), got)
	}
}
