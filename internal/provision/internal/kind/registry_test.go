package kind

import (
	"path"
	"strings"
	"testing"
)

// The nodes unpack hostsFiles into containerd's config_path: each
// registry's hosts.toml must come out under its own directory, unchanged.
func TestHostsFiles(t *testing.T) {
	files := map[string]string{
		"kubeproof.local": "server = \"http://127.0.0.1:9\"\n",
		"127.0.0.1:5001":  "server = \"http://172.18.0.1:5001\"\n",
	}
	got := map[string]string{}
	dirs := map[string]bool{}
	for _, f := range hostsFiles(files) {
		if strings.HasSuffix(f.Path, "/") { // imagebuild.File's directory
			dirs[f.Path] = true
			continue
		}
		if !dirs[path.Dir(f.Path)+"/"] {
			t.Errorf("%s comes before its directory", f.Path)
		}
		got[f.Path] = string(f.Data)
	}
	for host, want := range files {
		if got[host+"/hosts.toml"] != want {
			t.Errorf("%s/hosts.toml = %q, want %q", host, got[host+"/hosts.toml"], want)
		}
	}
	if len(got) != len(files) {
		t.Errorf("%d files, want %d: %v", len(got), len(files), got)
	}
}
