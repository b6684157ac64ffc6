package registryhosts

import (
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/kubeproof/kubeproof/contract/images"
	"github.com/kubeproof/kubeproof/internal/provision/internal/config"
)

func TestFiles(t *testing.T) {
	cases := []struct {
		shape      config.Shape
		host, want string // want: the server, "" for no file
	}{
		{config.Shape{ImageRegistry: "127.0.0.1:5001/kubeproof", InsecureRegistry: true}, "127.0.0.1:5001", "http://172.18.0.1:5001"},
		{config.Shape{ImageRegistry: "localhost:5001", InsecureRegistry: true}, "localhost:5001", "http://172.18.0.1:5001"},
		{config.Shape{ImageRegistry: "registry.example:5000/x", InsecureRegistry: true}, "registry.example:5000", "http://registry.example:5000"},
		{config.Shape{ImageRegistry: "registry.example/x"}, "registry.example", ""},
	}
	for _, c := range cases {
		files := Files(c.shape, "172.18.0.1")
		if Server(files[images.LoadedRegistry]) != Nowhere {
			t.Errorf("%s: pulls of %s go to %q", c.shape.ImageRegistry, images.LoadedRegistry, Server(files[images.LoadedRegistry]))
		}
		file := files[c.host]
		if c.want == "" {
			if file != "" {
				t.Errorf("%s: a hosts file for a secure remote registry: %s", c.shape.ImageRegistry, file)
			}
			continue
		}
		var parsed struct {
			Server string
			Host   map[string]struct {
				Capabilities []string
				SkipVerify   bool `toml:"skip_verify"`
			}
		}
		if _, err := toml.Decode(file, &parsed); err != nil {
			t.Fatalf("%s: %v\n%s", c.shape.ImageRegistry, err, file)
		}
		if parsed.Server != c.want || Server(file) != c.want {
			t.Errorf("%s: server %q (%q), want %q", c.shape.ImageRegistry, parsed.Server, Server(file), c.want)
		}
		if h, ok := parsed.Host[c.want]; !ok || !strings.Contains(strings.Join(h.Capabilities, ","), "pull") {
			t.Errorf("%s: host section %v", c.shape.ImageRegistry, parsed.Host)
		}
	}
}

// The registry kubeproof serves beside a cluster speaks plain HTTP: its
// hosts file says so, or containerd would speak HTTPS to it.
func TestPlainHTTP(t *testing.T) {
	file := PlainHTTP("10.250.0.1:5000")
	var parsed struct {
		Server string
		Host   map[string]struct {
			Capabilities []string
			SkipVerify   bool `toml:"skip_verify"`
		}
	}
	if _, err := toml.Decode(file, &parsed); err != nil {
		t.Fatalf("%v\n%s", err, file)
	}
	if parsed.Server != "http://10.250.0.1:5000" || !slices.Contains(parsed.Host["http://10.250.0.1:5000"].Capabilities, "pull") {
		t.Errorf("hosts file:\n%s", file)
	}
}
