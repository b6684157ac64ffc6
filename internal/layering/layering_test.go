package layering

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/kubeproof/kubeproof/"

// layer names the layer of a package of the module.
func layer(pkg string) string {
	p := strings.TrimPrefix(pkg, module)
	switch {
	case p == "internal/exitcode" || p == "internal/progress" || p == "internal/pki" || p == "internal/debpkg" ||
		p == "internal/buildinfo" || p == "internal/jsonschema" || p == "internal/sourcedoc" || p == "internal/noproxy":
		return "support"
	case p == "internal/provision":
		return "provision-face"
	case strings.HasPrefix(p, "internal/provision/"):
		return "provision"
	case p == "internal/judge" || p == "internal/report" || strings.HasPrefix(p, "internal/report/"):
		return "core"
	case p == "internal/runner":
		return "engine"
	case strings.HasPrefix(p, "internal/tools/") || p == "internal/clusterflags":
		return "tools"
	case strings.HasPrefix(p, "cmd/") || strings.HasPrefix(p, "ci/"):
		// ci/ holds the project's own test harnesses, which drive the
		// CLI's packages as the CLI does.
		return "commands"
	case p == "internal/layering" || p == "internal/doclinks" || p == "internal/hygiene":
		return "docs"
	// The spec side, in rooms (specRooms).
	case strings.HasPrefix(p, "contract/") || p == "fixtures":
		return "contract"
	case strings.HasPrefix(p, "kube/") || p == "webhooks" || strings.HasPrefix(p, "webhooks/"):
		return "kube"
	case p == "claims" || strings.HasPrefix(p, "claims/"):
		return "claims"
	case p == "framework" || strings.HasPrefix(p, "framework/"):
		return "framework"
	case p == "suites" || strings.HasPrefix(p, "suites/"):
		return "suites"
	}
	return "unknown"
}

// specRooms are the spec side's rooms, lowest first: what providers and
// specs agree on (contract/: the cluster contract, image names, labels,
// wire and log formats; fixtures), how kubeproof reaches a cluster's parts
// (kube/: watches, the audit log, etcd, kubectl, metrics, the node's
// runtime, identities; webhooks), the claims language and catalog
// (claims/), the per-spec Framework (framework), and the specs (suites/).
// Each may import those at or below it, none above: the Framework stands
// on libraries that know nothing of it.
var specRooms = []string{"contract", "kube", "claims", "framework", "suites"}

func spec(layer string) bool { return slices.Contains(specRooms, layer) }

// provisionMayUse is the part of the spec side provisioning stands on: the
// cluster contract, the names of the images, watches, and the log formats
// of the pod network's trace plugin and of the registry kubeproof serves.
var provisionMayUse = map[string]bool{
	module + "contract/cluster": true, module + "contract/images": true, module + "kube/observe": true,
	module + "contract/cnitrace": true, module + "contract/registrylog": true,
}

// cliRooms are the CLI's rooms, lowest first: each may import those below
// it (and the spec side, support and provisioning's face), none above.
var cliRooms = []string{"core", "engine", "tools", "commands"}

// allowed reports whether a package of layer from may import to.
func allowed(from, to string) bool {
	lf, lt := layer(from), layer(to)
	if from, to := slices.Index(cliRooms, lf), slices.Index(cliRooms, lt); from >= 0 {
		if to >= 0 {
			return to <= from
		}
		// The core judges and reports: it makes no cluster.
		return spec(lt) || lt == "support" || (lt == "provision-face" && lf != "core")
	}
	if from, to := slices.Index(specRooms, lf), slices.Index(specRooms, lt); from >= 0 {
		return (to >= 0 && to <= from) || lt == "support"
	}
	switch lf {
	case "support":
		return lt == "support"
	case "provision", "provision-face":
		return lt == "provision" || lt == "provision-face" || lt == "support" || provisionMayUse[to]
	default:
		return false
	}
}

// goList runs go list on the module. The go command reads the sources,
// which go test's cache does not see: so that a cached pass never hides a
// new import, the test opens every Go file of the module itself first
// (the cache then keys on them).
func goList(t *testing.T, args ...string) []byte {
	t.Helper()
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	err = filepath.WalkDir(strings.TrimSpace(string(root)), func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == "_output" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")):
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(path, ".go"):
			f, err := os.Open(path)
			if err == nil {
				f.Close()
			}
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk the module: %v", err)
	}
	out, err := exec.Command("go", append([]string{"list"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	return out
}

func TestLayers(t *testing.T) {
	out := goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...")
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

// The rules catch what they are for: a spec-side package that imports
// provisioning, the contract that imports the CLI, a room of the CLI that
// imports one above it (the engine the flag table, the judge the engine),
// a room of the spec side that imports one above it (a library the
// Framework, the Framework the specs).
// Imports behind provisioning's door the compiler refuses already.
func TestRulesRefuse(t *testing.T) {
	for _, c := range [][2]string{
		{"framework", "internal/provision/internal/local"},
		{"framework", "internal/provision"},
		{"contract/cluster", "internal/report"},
		{"internal/provision/internal/local", "internal/report"},
		{"internal/provision/internal/kind", "claims"},
		{"internal/pki", "contract/cluster"},
		{"internal/judge", "internal/runner"},
		{"internal/report", "internal/provision"},
		{"internal/runner", "internal/clusterflags"},
		{"internal/runner", "internal/tools/faults"},
		{"internal/tools/bench", "cmd/kubeproof"},
		{"contract/cluster", "kube/observe"},
		{"kube/etcd", "claims"},
		{"claims/observer", "framework"},
		{"claims", "suites/probes"},
		{"framework", "suites"},
		{"kube/observe", "internal/judge"},
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
	out := goList(t, "-tags", "e2e", "-f",
		"{{.Dir}}|{{join .GoFiles \" \"}} {{join .TestGoFiles \" \"}} {{join .XTestGoFiles \" \"}}|{{join .Imports \" \"}} {{join .TestImports \" \"}} {{join .XTestImports \" \"}}",
		module+"cmd/kubeproof")
	parts := strings.SplitN(strings.TrimSpace(string(out)), "|", 3)
	if len(parts) != 3 {
		t.Fatalf("go list: %q", out)
	}
	dir, files, imports := parts[0], strings.Fields(parts[1]), strings.Fields(parts[2])
	for _, imp := range imports {
		for _, bad := range cmdEngineImports {
			if imp == bad || strings.HasPrefix(imp, bad+"/") {
				t.Errorf("cmd/kubeproof imports %s: engine work belongs in internal/runner or a package of internal/tools", imp)
			}
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
