//go:build linux

// Package umlguest runs a command on a cgroup v2 Linux that runs as a
// process of this machine: Debian's user-mode-linux kernel, booted with this
// machine's root as a read-only hostfs. It is how kubeproof proves its
// local provider on a cgroup v2 host from a machine whose own cgroups are
// v1 and cannot be changed.
//
// The guest sees the host's files (binaries, caches) through an overlay
// whose writable layer is in the guest's memory, so nothing it does reaches
// the host's disk but the directories it is given to share. It has no
// network device: what its clusters send stays inside it.
//
// One program plays both parts: Boot, on the host, starts the kernel with
// that program as the guest's init; Init, as PID 1 in the guest, sets the
// guest up, runs the command and powers the guest off.
package umlguest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Spec is what the guest runs; Boot writes it where the guest reads it.
type Spec struct {
	// Command is the program and its arguments.
	Command []string `json:"command"`
	// Env is the command's environment (besides PATH and HOME, which
	// Init sets).
	Env []string `json:"env,omitempty"`
	// Dir is the command's working directory.
	Dir string `json:"dir,omitempty"`
	// Shared are host directories the guest mounts writable at the same
	// path: what the command writes there reaches the host.
	Shared []string `json:"shared"`
	// Scratch are directories that get a tmpfs of their own instead of
	// the root's overlay: an overlay cannot be another overlay's upper
	// layer, which containerd's snapshots need.
	Scratch []string `json:"scratch,omitempty"`
	// Results is a shared directory where Init writes the command's exit
	// code (ExitCodeFile) and what the guest's kernel offered.
	Results string `json:"results"`
	// Modules are kernel modules loaded before the command runs (the
	// kernel loads most others on first use, through modprobe).
	Modules []string `json:"modules,omitempty"`
	// Systemd boots systemd as the guest's PID 1 once it is set up, and
	// runs the command as a service of it: a machine booted by systemd,
	// as most are, where a node's cgroups are systemd's to make.
	Systemd bool `json:"systemd,omitempty"`
	// CPUMHz is the CPU clock the guest's /proc/cpuinfo says (the host's):
	// the guest kernel prints none, and a kubelet does not start without.
	CPUMHz string `json:"cpuMHz,omitempty"`
}

// ExitCodeFile is the file in Spec.Results that holds the command's exit
// code once it ended.
const ExitCodeFile = "exit-code"

// specParam is the kernel command line parameter that names the spec
// file: the kernel passes a parameter with "=" and no "." to init as an
// environment variable.
const specParam = "kubeproof_guest"

func writeSpec(path string, s Spec) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the guest spec: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("write the guest spec: %w", err)
	}
	return nil
}

func readSpec(path string) (Spec, error) {
	var s Spec
	data, err := os.ReadFile(path)
	if err != nil {
		return s, fmt.Errorf("read the guest spec: %w", err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("parse the guest spec %s: %w", path, err)
	}
	if len(s.Command) == 0 {
		return s, fmt.Errorf("the guest spec %s has no command", path)
	}
	return s, nil
}
