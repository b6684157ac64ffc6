// Package capdrop adapts container specs to a machine whose capability
// bounding set is smaller than the full set. Docker gives a --privileged
// container every capability it knows; runc then fails with "unable to apply
// caps: operation not permitted" when the host's bounding set lacks one (a VM
// without CAP_SYS_RESOURCE, for example). Dropping the capabilities the host
// cannot grant anyway is what a privileged container gets on such a host.
package capdrop

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// capNames are the kernel's capabilities by number (linux/capability.h).
var capNames = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
	"CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK",
	"CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE",
	"CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE",
	"CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE",
	"CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG",
	"CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
}

// CapSet is a set of capability names.
type CapSet map[string]bool

// ParseMask turns a capability bit mask (as in /proc/*/status) into a set.
// Bits the table does not name are ignored: a newer kernel's capabilities
// are unknown to the specs we filter too.
func ParseMask(hex string) (CapSet, error) {
	mask, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
	if err != nil {
		return nil, fmt.Errorf("parse capability mask %q: %w", hex, err)
	}
	set := CapSet{}
	for bit, name := range capNames {
		if mask&(1<<uint(bit)) != 0 {
			set[name] = true
		}
	}
	return set, nil
}

// BoundingSet reads this process's capability bounding set.
func BoundingSet() (CapSet, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return nil, fmt.Errorf("read bounding set: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapBnd:"); ok {
			return ParseMask(v)
		}
	}
	return nil, fmt.Errorf("read bounding set: no CapBnd line in /proc/self/status")
}

// capabilityLists are the fields of an OCI process's "capabilities".
var capabilityLists = []string{"bounding", "effective", "inheritable", "permitted", "ambient"}

// FilterProcess drops capabilities outside allowed from an OCI process
// object (JSON), keeping every other field as it was. It reports whether
// anything was dropped.
func FilterProcess(process json.RawMessage, allowed CapSet) (json.RawMessage, bool, error) {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(process, &p); err != nil {
		return nil, false, fmt.Errorf("decode process: %w", err)
	}
	raw, ok := p["capabilities"]
	if !ok || string(raw) == "null" {
		return process, false, nil
	}
	var caps map[string]json.RawMessage
	if err := json.Unmarshal(raw, &caps); err != nil {
		return nil, false, fmt.Errorf("decode capabilities: %w", err)
	}
	changed := false
	for _, list := range capabilityLists {
		r, ok := caps[list]
		if !ok || string(r) == "null" {
			continue
		}
		var names []string
		if err := json.Unmarshal(r, &names); err != nil {
			return nil, false, fmt.Errorf("decode capabilities.%s: %w", list, err)
		}
		kept := make([]string, 0, len(names))
		for _, n := range names {
			if allowed[n] {
				kept = append(kept, n)
			}
		}
		if len(kept) != len(names) {
			changed = true
			caps[list], _ = json.Marshal(kept)
		}
	}
	if !changed {
		return process, false, nil
	}
	p["capabilities"], _ = json.Marshal(caps)
	out, err := json.Marshal(p)
	return out, true, err
}

// FilterSpec does FilterProcess on a whole OCI runtime spec (config.json).
func FilterSpec(spec []byte, allowed CapSet) ([]byte, bool, error) {
	var s map[string]json.RawMessage
	if err := json.Unmarshal(spec, &s); err != nil {
		return nil, false, fmt.Errorf("decode spec: %w", err)
	}
	proc, ok := s["process"]
	if !ok {
		return spec, false, nil
	}
	filtered, changed, err := FilterProcess(proc, allowed)
	if err != nil || !changed {
		return spec, false, err
	}
	s["process"] = filtered
	out, err := json.Marshal(s)
	return out, true, err
}

// Files returns the JSON files a runc command line will read that carry
// capabilities: the bundle's config.json for create and run, the --process
// file for exec. Global flags come before the command; the bundle defaults
// to the working directory.
func Files(args []string) (specs, processes []string) {
	command, rest := "", args
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			command, rest = a, args[i+1:]
			break
		}
		// Global flags with a separate value.
		switch a {
		case "--root", "--log", "--log-format", "--criu":
			i++
		}
	}
	value := func(long, short string) (string, bool) {
		for i, a := range rest {
			switch {
			case a == long || a == short:
				if i+1 < len(rest) {
					return rest[i+1], true
				}
			case strings.HasPrefix(a, long+"="):
				return strings.TrimPrefix(a, long+"="), true
			}
		}
		return "", false
	}
	switch command {
	case "create", "run":
		bundle, ok := value("--bundle", "-b")
		if !ok {
			bundle = "."
		}
		return []string{filepath.Join(bundle, "config.json")}, nil
	case "exec":
		if p, ok := value("--process", "-p"); ok {
			return nil, []string{p}
		}
	}
	return nil, nil
}

// Rewrite filters, in place, every file Files names for args.
func Rewrite(args []string, allowed CapSet) error {
	specs, processes := Files(args)
	for _, path := range specs {
		if err := rewrite(path, allowed, FilterSpec); err != nil {
			return err
		}
	}
	for _, path := range processes {
		if err := rewrite(path, allowed, func(b []byte, a CapSet) ([]byte, bool, error) {
			return FilterProcess(b, a)
		}); err != nil {
			return err
		}
	}
	return nil
}

func rewrite(path string, allowed CapSet, filter func([]byte, CapSet) ([]byte, bool, error)) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	out, changed, err := filter(data, allowed)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if !changed {
		return nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if err := os.WriteFile(path, out, info.Mode().Perm()); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
