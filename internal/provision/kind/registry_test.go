package kind

import (
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/kubeproof/kubeproof/framework/cluster"
)

func TestHostsTOML(t *testing.T) {
	cases := []struct {
		shape      cluster.Shape
		host, want string // want: the server, "" for no file
	}{
		{cluster.Shape{ImageRegistry: "127.0.0.1:5001/kubeproof", InsecureRegistry: true}, "127.0.0.1:5001", "http://172.18.0.1:5001"},
		{cluster.Shape{ImageRegistry: "localhost:5001", InsecureRegistry: true}, "localhost:5001", "http://172.18.0.1:5001"},
		{cluster.Shape{ImageRegistry: "registry.example:5000/x", InsecureRegistry: true}, "registry.example:5000", "http://registry.example:5000"},
		{cluster.Shape{ImageRegistry: "registry.example/x"}, "registry.example", ""},
	}
	for _, c := range cases {
		host, file := hostsTOML(c.shape, "172.18.0.1")
		if host != c.host {
			t.Errorf("%s: host %q, want %q", c.shape.ImageRegistry, host, c.host)
		}
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
		if parsed.Server != c.want || serverOf(file) != c.want {
			t.Errorf("%s: server %q (%q), want %q", c.shape.ImageRegistry, parsed.Server, serverOf(file), c.want)
		}
		if h, ok := parsed.Host[c.want]; !ok || !strings.Contains(strings.Join(h.Capabilities, ","), "pull") {
			t.Errorf("%s: host section %v", c.shape.ImageRegistry, parsed.Host)
		}
	}
}
