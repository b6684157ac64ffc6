package hostchange

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KubeletSysctls are the kernel settings a kubelet changes at start
// (vm.overcommit_memory, kernel.panic and friends). They are global, not per
// network namespace: a kubelet in a local cluster or in a kind node changes
// them for the whole machine.
var KubeletSysctls = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
}

// savedSysctls is the file that holds the machine's own values while any
// holder (a cluster that runs kubelets) exists.
type savedSysctls struct {
	Values map[string]string `json:"values"`
	holders
}

// Sysctls saves and restores global kernel settings around the lifetime of
// its holders: the first holder records the machine's values, the last one
// to leave puts them back.
type Sysctls struct {
	// File is where the values and holders are kept.
	File string
	// Keys are the settings, as paths below /proc/sys.
	Keys []string
}

// Hold records the current values if nobody holds them yet, and adds holder.
func (s Sysctls) Hold(holder string) error {
	return hold(s.File, "sysctls", holder, func(saved *savedSysctls) error {
		saved.Values = map[string]string{}
		for _, k := range s.Keys {
			if data, err := os.ReadFile(filepath.Join("/proc/sys", k)); err == nil {
				saved.Values[k] = strings.TrimSpace(string(data))
			}
		}
		return nil
	}, nil)
}

// Release removes holder; if it was the last, the saved values are written
// back and the file removed.
func (s Sysctls) Release(holder string) error {
	saved, last, err := release[savedSysctls](s.File, "sysctls", holder)
	if err != nil || !last {
		return err
	}
	for k, v := range saved.Values {
		path := filepath.Join("/proc/sys", k)
		if now, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(now)) == v {
			continue
		}
		if err := os.WriteFile(path, []byte(v), 0o644); err != nil {
			return fmt.Errorf("restore %s: %w", k, err)
		}
	}
	return nil
}
