// Package dockerd runs kubeproof's private Docker daemon, for the kind
// provider on machines with no Docker engine of their own, and puts the
// machine back as it was when the daemon stops.
//
// The daemon is Debian's docker.io with settings that keep it to itself: its
// own socket, data and exec roots, no default bridge, no iptables rules, no
// IP forwarding, containers in one cgroup of ours. Its OCI runtime is
// kubeproof-runc (runc that drops capabilities the machine's bounding set
// lacks, without which --privileged containers fail in some VMs). Its one
// network, "kind", has a fixed bridge name, and a FORWARD rule of ours drops
// anything from that bridge that would leave it: kind nodes reach each other
// and the host, never the outside.
package dockerd

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kubeproof/kubeproof/internal/debpkg"
	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/progress"
	"github.com/kubeproof/kubeproof/internal/provision/internal/imagebuild"
	"github.com/kubeproof/kubeproof/internal/provision/internal/process"
)

const (
	// StateDir holds the daemon's configuration, state, log and runtime.
	StateDir = "/var/lib/kubeproof/dockerd"
	// RunDir holds its socket, pid file and exec root.
	RunDir = "/run/kubeproof/dockerd"
	// Network is the Docker network the daemon makes for kind (kind uses an
	// existing network of that name as it is).
	Network = "kind"
	// Bridge is that network's bridge device.
	Bridge = "kp-kind0"
	// CgroupParent is the cgroup of every container the daemon runs.
	CgroupParent = "kubeproof-docker"
	// egressChain is our iptables chain that keeps the network's traffic in.
	egressChain = "KUBEPROOF-DOCKER-EGRESS"
	// runtimeName is kubeproof-runc's name in the daemon's configuration.
	runtimeName = "kubeproof-runc"
)

// Engine are the Debian packages the daemon needs.
var Engine = []debpkg.Package{
	{Name: "docker.io", File: "/usr/sbin/dockerd"},
	{Name: "runc", File: "/usr/sbin/runc"},
	{Name: "iptables", File: "/usr/sbin/iptables"},
}

// Host is the daemon's address, for DOCKER_HOST.
func Host() string { return "unix://" + socket() }

func socket() string      { return filepath.Join(RunDir, "docker.sock") }
func pidFile() string     { return filepath.Join(RunDir, "dockerd.pid") }
func execRoot() string    { return filepath.Join(RunDir, "exec") }
func stateFile() string   { return filepath.Join(StateDir, "dockerd.json") }
func configFile() string  { return filepath.Join(StateDir, "daemon.json") }
func logFile() string     { return filepath.Join(StateDir, "dockerd.log") }
func runtimePath() string { return filepath.Join(StateDir, "bin", runtimeName) }

// DataRoot is where the daemon keeps images and containers: a cache that
// outlives the daemon (node images take minutes to make).
func DataRoot(cacheDir string) string { return filepath.Join(cacheDir, "docker") }

// Leftovers counts the containers in the data root: a daemon that stopped
// cleanly leaves none.
func Leftovers(cacheDir string) int {
	entries, _ := os.ReadDir(filepath.Join(DataRoot(cacheDir), "containers"))
	return len(entries)
}

// sharedPaths are host paths the daemon (or the containerd it starts, or
// kind's mounts) creates when they are missing; Stop removes the ones that
// did not exist before, once empty (children before parents).
var sharedPaths = []string{
	"/run/containerd/s", "/run/containerd",
	"/run/docker/plugins", "/run/docker",
	"/etc/docker/key.json",
	"/lib/modules",
	StateDir, RunDir, "/run/kubeproof", "/var/lib/kubeproof",
}

// state is what Start recorded, for Stop.
type state struct {
	Daemon   process.Record  `json:"daemon"`
	DataRoot string          `json:"dataRoot"`
	Existed  map[string]bool `json:"existed"`
	Links    []string        `json:"links"`
	Started  time.Time       `json:"started"`
}

// Running reports whether our daemon is up and answering.
func Running(ctx context.Context) bool {
	st, err := loadState()
	return err == nil && st.Daemon.Alive() && Ping(ctx, Host()) == nil
}

// Start installs Docker if needed and starts the private daemon; a daemon
// already running is left as it is. cacheDir holds the data root.
func Start(ctx context.Context, cacheDir string, pr *progress.Printer) (err error) {
	if Running(ctx) {
		pr.Infof("private Docker daemon already running at %s", Host())
		return nil
	}
	if os.Geteuid() != 0 {
		return exitcode.Errorf(exitcode.Permission, "the private Docker daemon needs root")
	}
	if err := debpkg.Ensure(ctx, Engine, pr); err != nil {
		return err
	}
	// A daemon that died leaves state behind: clean up first.
	if err := Stop(ctx, pr); err != nil {
		return fmt.Errorf("clean up an earlier daemon: %w", err)
	}
	done := pr.Step("starting the private Docker daemon")
	defer func() { done(err) }()

	st := &state{DataRoot: DataRoot(cacheDir), Existed: map[string]bool{}, Started: time.Now()}
	for _, p := range sharedPaths {
		_, err := os.Lstat(p)
		st.Existed[p] = err == nil
	}
	st.Links = links()
	for _, d := range []string{StateDir, RunDir, filepath.Dir(runtimePath()), st.DataRoot} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", d, err)
		}
	}
	// Saved before anything else changes, so that Stop can undo a Start
	// that fails half-way.
	if err := saveState(st); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = Stop(context.WithoutCancel(ctx), progress.Discard())
		}
	}()
	if err := installRuntime(); err != nil {
		return err
	}
	if err := writeConfig(st.DataRoot); err != nil {
		return err
	}
	proc, err := process.Start("dockerd", []string{"dockerd", "--config-file", configFile()}, logFile(), nil)
	if err != nil {
		return err
	}
	st.Daemon = proc.Record
	if err := saveState(st); err != nil {
		return err
	}
	if err := waitReady(ctx, proc); err != nil {
		return err
	}
	// Stop removes every container, so any the new daemon finds are those
	// of one that died without it (a machine restart): a kind node among
	// them would pass for a cluster nobody made.
	if n := Leftovers(cacheDir); n > 0 {
		pr.Infof("removing %d container(s) left by a private Docker daemon that was not stopped", n)
		if err := removeAll(ctx); err != nil {
			return fmt.Errorf("remove containers left by an earlier daemon: %w", err)
		}
	}
	if err := ensureNetwork(ctx); err != nil {
		return err
	}
	return guardEgress()
}

// installRuntime copies kubeproof-runc from beside the kubeproof binary:
// the daemon keeps calling it after the build directory is gone.
func installRuntime() error {
	dir, err := imagebuild.ProgramDir()
	if err != nil {
		return err
	}
	data, err := os.ReadFile(filepath.Join(dir, runtimeName))
	if err != nil {
		return exitcode.Errorf(exitcode.MissingTool, "%s not found beside kubeproof (build it with `make build`): %v", runtimeName, err)
	}
	tmp := runtimePath() + ".partial"
	if err := os.WriteFile(tmp, data, 0o755); err != nil {
		return fmt.Errorf("install %s: %w", runtimeName, err)
	}
	if err := os.Rename(tmp, runtimePath()); err != nil {
		return fmt.Errorf("install %s: %w", runtimeName, err)
	}
	return nil
}

// daemonConfig keeps the daemon off everything the machine has: see the
// package comment.
func daemonConfig(dataRoot string) map[string]any {
	return map[string]any{
		"data-root":       dataRoot,
		"exec-root":       execRoot(),
		"pidfile":         pidFile(),
		"hosts":           []string{Host()},
		"bridge":          "none",
		"iptables":        false,
		"ip-forward":      false,
		"ip-masq":         false,
		"default-runtime": runtimeName,
		"runtimes":        map[string]any{runtimeName: map[string]string{"path": runtimePath()}},
		"storage-driver":  "overlay2",
		"exec-opts":       []string{"native.cgroupdriver=cgroupfs"},
		"cgroup-parent":   "/" + CgroupParent,
		"log-opts":        map[string]string{"max-size": "20m", "max-file": "2"},
		// A name Docker's embedded DNS does not know gets no answer from
		// it here (this machine forwards nothing to a resolver), so a
		// lookup waits out glibc's timeout: 5 s by default, and kind's
		// entrypoint makes one (host.docker.internal) on every node start.
		"dns-opts": []string{"timeout:1", "attempts:1"},
	}
}

func writeConfig(dataRoot string) error {
	data, err := json.MarshalIndent(daemonConfig(dataRoot), "", "  ")
	if err != nil {
		return fmt.Errorf("encode daemon configuration: %w", err)
	}
	if err := os.WriteFile(configFile(), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write daemon configuration: %w", err)
	}
	return nil
}

// waitReady waits for the daemon to answer /_ping, or to exit.
func waitReady(ctx context.Context, proc *process.Proc) error {
	const timeout = 90 * time.Second
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if last = Ping(ctx, Host()); last == nil {
			return nil
		}
		select {
		case <-proc.Exited():
			return fmt.Errorf("dockerd exited (%v); last log lines:\n%s", proc.Err(), process.Tail(proc.Log, 8))
		case <-ctx.Done():
			return fmt.Errorf("timed out after %s waiting for dockerd to answer at %s; last seen: %v; log %s", timeout, Host(), last, logFile())
		case <-tick.C:
		}
	}
}

// ensureNetwork makes the network kind will use, on our bridge.
func ensureNetwork(ctx context.Context) error {
	if err := docker(ctx, "network", "inspect", Network); err == nil {
		return nil
	}
	return docker(ctx, "network", "create", "--driver", "bridge",
		"--opt", "com.docker.network.bridge.name="+Bridge, Network)
}

// guardEgress drops whatever the bridge would forward out of the machine.
// With IP forwarding off nothing is forwarded anyway; the rule keeps it so
// if something else turns forwarding on.
func guardEgress() error {
	_ = iptables("-N", egressChain)
	if err := iptables("-F", egressChain); err != nil {
		return err
	}
	if err := iptables("-A", egressChain, "-i", Bridge, "!", "-o", Bridge, "-j", "DROP"); err != nil {
		return err
	}
	if iptables("-C", "FORWARD", "-j", egressChain) != nil {
		return iptables("-I", "FORWARD", "1", "-j", egressChain)
	}
	return nil
}

func removeEgressGuard() []error {
	var errs []error
	for iptables("-C", "FORWARD", "-j", egressChain) == nil {
		if err := iptables("-D", "FORWARD", "-j", egressChain); err != nil {
			errs = append(errs, err)
			break
		}
	}
	if iptables("-L", egressChain, "-n") == nil {
		if err := iptables("-F", egressChain); err != nil {
			errs = append(errs, err)
		}
		if err := iptables("-X", egressChain); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func iptables(args ...string) error {
	out, err := exec.Command("iptables", append([]string{"-w"}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("iptables %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// docker runs the docker CLI against our daemon.
func docker(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+Host())
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// links lists the machine's network interfaces.
func links() []string {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	var names []string
	for _, i := range ifs {
		names = append(names, i.Name)
	}
	return names
}

func saveState(st *state) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encode dockerd state: %w", err)
	}
	if err := os.WriteFile(stateFile(), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("save dockerd state: %w", err)
	}
	return nil
}

func loadState() (*state, error) {
	data, err := os.ReadFile(stateFile())
	if err != nil {
		return nil, err
	}
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("parse %s: %w", stateFile(), err)
	}
	return &st, nil
}

// ourProcess reports whether a command line belongs to our daemon: dockerd
// with our configuration, or the containerd, shims and proxies it started
// (they name our exec root or socket).
func ourProcess(args []string) bool {
	return slices.ContainsFunc(args, func(a string) bool {
		return strings.Contains(a, configFile()) || strings.Contains(a, RunDir+"/")
	})
}
