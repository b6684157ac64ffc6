package layering

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/kubeproof/kubeproof/"

// layer names the layer of a package of the module.
func layer(pkg string) string {
	p := strings.TrimPrefix(pkg, module)
	switch {
	case p == "internal/exitcode" || p == "internal/progress" || p == "internal/pki":
		return "support"
	case strings.HasPrefix(p, "internal/provision/"):
		return "provision"
	case strings.HasPrefix(p, "internal/cli/") || strings.HasPrefix(p, "cmd/") || strings.HasPrefix(p, "ci/"):
		// ci/ holds the project's own test harnesses, which drive the
		// CLI's packages as the CLI does.
		return "cli"
	case p == "internal/layering" || p == "internal/doclinks":
		return "docs"
	case p == "framework" || strings.HasPrefix(p, "framework/") || strings.HasPrefix(p, "webhooks") ||
		p == "fixtures" || strings.HasPrefix(p, "suites"):
		return "spec"
	}
	return "unknown"
}

// provisionMayUse is the part of the spec side provisioning stands on: the
// cluster contract, the names of the images, watches, and the log format
// of the pod network's trace plugin.
var provisionMayUse = map[string]bool{
	module + "framework/cluster": true, module + "framework/images": true, module + "framework/observe": true,
	module + "framework/cnitrace": true,
}

// allowed reports whether a package of layer from may import to.
func allowed(from, to string) bool {
	switch lf, lt := layer(from), layer(to); lf {
	case "cli":
		return true
	case "spec":
		return lt == "spec" || lt == "support"
	case "support":
		return lt == "support"
	case "provision":
		return lt == "provision" || lt == "support" || provisionMayUse[to]
	default:
		return false
	}
}

func TestLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	pkgs := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		from := fields[0]
		pkgs++
		if layer(from) == "unknown" {
			t.Errorf("package %s is in no layer: put it in one (see package layering)", from)
		}
		for _, to := range fields[1:] {
			if strings.HasPrefix(to, module) && !allowed(from, to) {
				t.Errorf("%s (%s) imports %s (%s)", strings.TrimPrefix(from, module), layer(from), strings.TrimPrefix(to, module), layer(to))
			}
		}
	}
	if pkgs < 20 {
		t.Fatalf("go list found only %d packages", pkgs)
	}
}

// The rules catch what they are for: a spec-side package that imports a
// provider, or the contract that imports the CLI.
func TestRulesRefuse(t *testing.T) {
	for _, c := range [][2]string{
		{"framework", "internal/provision/local"},
		{"framework/cluster", "internal/cli/report"},
		{"internal/provision/local", "internal/cli/report"},
		{"internal/provision/kind", "framework/claims"},
		{"internal/pki", "framework/cluster"},
	} {
		if allowed(module+c[0], module+c[1]) {
			t.Errorf("%s may import %s", c[0], c[1])
		}
	}
}
