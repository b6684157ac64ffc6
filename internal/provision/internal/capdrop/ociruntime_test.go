package capdrop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestParseMask(t *testing.T) {
	set, err := ParseMask("000001fffeffffff")
	if err != nil {
		t.Fatal(err)
	}
	if set["CAP_SYS_RESOURCE"] {
		t.Error("bit 24 (CAP_SYS_RESOURCE) is clear in the mask but in the set")
	}
	if !set["CAP_SYS_ADMIN"] || !set["CAP_CHECKPOINT_RESTORE"] || len(set) != len(capNames)-1 {
		t.Errorf("set has %d capabilities, want %d", len(set), len(capNames)-1)
	}
}

func TestFilterSpecKeepsOtherFields(t *testing.T) {
	spec := []byte(`{"ociVersion":"1.0.2","process":{"args":["/sbin/init"],"capabilities":{"bounding":["CAP_SYS_ADMIN","CAP_SYS_RESOURCE"],"effective":["CAP_SYS_RESOURCE"],"ambient":null}},"hostname":"n"}`)
	allowed := CapSet{"CAP_SYS_ADMIN": true}
	out, changed, err := FilterSpec(spec, allowed)
	if err != nil || !changed {
		t.Fatalf("changed=%v err=%v", changed, err)
	}
	var got struct {
		OCIVersion string `json:"ociVersion"`
		Hostname   string `json:"hostname"`
		Process    struct {
			Args         []string            `json:"args"`
			Capabilities map[string][]string `json:"capabilities"`
		} `json:"process"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.OCIVersion != "1.0.2" || got.Hostname != "n" || !slices.Equal(got.Process.Args, []string{"/sbin/init"}) {
		t.Errorf("other fields changed: %s", out)
	}
	if !slices.Equal(got.Process.Capabilities["bounding"], []string{"CAP_SYS_ADMIN"}) || len(got.Process.Capabilities["effective"]) != 0 {
		t.Errorf("capabilities = %v", got.Process.Capabilities)
	}
	if _, changed, _ := FilterSpec(out, allowed); changed {
		t.Error("filtering twice changed the spec again")
	}
}

func TestFiles(t *testing.T) {
	cases := []struct {
		args             []string
		specs, processes []string
	}{
		{[]string{"--root", "/run/r", "--log", "/l", "create", "--bundle", "/b", "id"}, []string{"/b/config.json"}, nil},
		{[]string{"--systemd-cgroup", "run", "-b", "/b", "id"}, []string{"/b/config.json"}, nil},
		{[]string{"create", "id"}, []string{"config.json"}, nil},
		{[]string{"--root", "/r", "exec", "--process", "/tmp/p.json", "--detach", "id"}, nil, []string{"/tmp/p.json"}},
		{[]string{"--root", "/r", "start", "id"}, nil, nil},
		{[]string{"--root", "/r", "delete", "--force", "id"}, nil, nil},
	}
	for _, c := range cases {
		specs, procs := Files(c.args)
		if !slices.Equal(specs, c.specs) || !slices.Equal(procs, c.processes) {
			t.Errorf("Files(%v) = %v, %v; want %v, %v", c.args, specs, procs, c.specs, c.processes)
		}
	}
}

func TestRewrite(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, []byte(`{"process":{"capabilities":{"bounding":["CAP_SYS_RESOURCE","CAP_KILL"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Rewrite([]string{"create", "--bundle", dir, "c1"}, CapSet{"CAP_KILL": true}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(cfg)
	if string(data) != `{"process":{"capabilities":{"bounding":["CAP_KILL"]}}}` {
		t.Errorf("config.json = %s", data)
	}
}
