package layering

import (
	"os"
	"os/exec"
	"path/filepath"
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
	case strings.HasPrefix(p, "internal/provision/") || nodePrograms[p]:
		return "provision"
	case p == "internal/runner" || strings.HasPrefix(p, "internal/cli/") || strings.HasPrefix(p, "cmd/") || strings.HasPrefix(p, "ci/"):
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

// nodePrograms are the programs a provider installs on its nodes or runs
// under its Docker daemon: provisioning's own, whatever their directory.
var nodePrograms = map[string]bool{"cmd/kubeproof-cni": true, "cmd/kubeproof-runc": true}

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
		// The commands reach provisioning through internal/ only.
		return !strings.HasPrefix(from, module+"cmd/") || lt != "provision"
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
		{"framework/cluster", "internal/report"},
		{"internal/provision/local", "internal/report"},
		{"internal/provision/kind", "framework/claims"},
		{"internal/pki", "framework/cluster"},
		{"cmd/kubeproof", "internal/provision/providers"},
		{"cmd/kubeproof", "internal/provision/kind"},
	} {
		if allowed(module+c[0], module+c[1]) {
			t.Errorf("%s may import %s", c[0], c[1])
		}
	}
}

// cmdEngineImports are the packages whose use means engine work (starting
// or signalling processes, serving the network, Ginkgo's CLI): none of them
// in cmd/kubeproof, code or tests (see package layering).
var cmdEngineImports = []string{"os/exec", "os/signal", "syscall", "golang.org/x/sys/unix", "net", "net/http", "github.com/onsi/ginkgo/v2/ginkgo"}

// cmdMaxLines is the most lines a file of cmd/kubeproof may have.
const cmdMaxLines = 450

func TestCommandsHoldNoEngine(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "e2e", "-f",
		"{{.Dir}}|{{join .GoFiles \" \"}} {{join .TestGoFiles \" \"}} {{join .XTestGoFiles \" \"}}|{{join .Imports \" \"}} {{join .TestImports \" \"}} {{join .XTestImports \" \"}}",
		module+"cmd/kubeproof").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	parts := strings.SplitN(strings.TrimSpace(string(out)), "|", 3)
	if len(parts) != 3 {
		t.Fatalf("go list: %q", out)
	}
	dir, files, imports := parts[0], strings.Fields(parts[1]), strings.Fields(parts[2])
	for _, imp := range imports {
		for _, bad := range cmdEngineImports {
			if imp == bad || strings.HasPrefix(imp, bad+"/") {
				t.Errorf("cmd/kubeproof imports %s: engine work belongs in internal/runner or a package of internal/cli", imp)
			}
		}
		if strings.HasPrefix(imp, module+"internal/provision/") {
			t.Errorf("cmd/kubeproof imports %s: reach it through internal/runner or a package of internal/cli", strings.TrimPrefix(imp, module))
		}
	}
	if len(files) < 10 {
		t.Fatalf("go list found only %d files in cmd/kubeproof", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), "\n"); n > cmdMaxLines {
			t.Errorf("cmd/kubeproof/%s has %d lines, more than %d: move what it does into a package", f, n, cmdMaxLines)
		}
	}
}
