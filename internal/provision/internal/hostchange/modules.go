package hostchange

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
)

// Module is a kernel module a cluster needs, and the file that shows it
// is there (built in or loaded).
type Module struct {
	Name string
	// Present is a path that exists once the module works.
	Present string
}

// BrNetfilter passes bridged traffic through iptables: without it, a reply
// from one Pod to another on the same bridge skips kube-proxy's DNAT, and
// Service traffic between them breaks.
var BrNetfilter = Module{Name: "br_netfilter", Present: "/proc/sys/net/bridge/bridge-nf-call-iptables"}

// Modules loads kernel modules while any holder exists; the last holder to
// leave unloads those that were not there before the first came.
type Modules struct {
	// File keeps the modules loaded for the holders, and the holders.
	File string
	// Modules are the modules to have.
	Modules []Module
}

type savedModules struct {
	Loaded []string `json:"loaded"`
	holders
}

// Hold loads the modules that are not there and adds holder.
func (m Modules) Hold(holder string) error {
	return hold(m.File, "kernel modules", holder, nil, func(saved *savedModules) error {
		for _, mod := range m.Modules {
			if _, err := os.Stat(mod.Present); err == nil {
				continue
			}
			if err := modprobe(mod.Name); err != nil {
				return err
			}
			if _, err := os.Stat(mod.Present); err != nil {
				return fmt.Errorf("kernel module %s loaded, but %s is still missing", mod.Name, mod.Present)
			}
			saved.Loaded = append(saved.Loaded, mod.Name)
		}
		return nil
	})
}

// Release removes holder; the last one unloads what the holders loaded.
// A module something else uses now stays, and the error says so.
func (m Modules) Release(holder string) error {
	saved, last, err := release[savedModules](m.File, "kernel modules", holder)
	if err != nil || !last {
		return err
	}
	for _, name := range saved.Loaded {
		if out, err := exec.Command("modprobe", "-r", name).CombinedOutput(); err != nil {
			return fmt.Errorf("unload kernel module %s, loaded for the clusters: %w: %s", name, err, bytes.TrimSpace(out))
		}
	}
	return nil
}

func modprobe(name string) error {
	path, err := exec.LookPath("modprobe")
	if err != nil {
		return fmt.Errorf("kernel module %s is not loaded, and there is no modprobe to load it (install kmod, or load it by hand)", name)
	}
	if out, err := exec.Command(path, name).CombinedOutput(); err != nil {
		return fmt.Errorf("load kernel module %s: %w: %s", name, err, bytes.TrimSpace(out))
	}
	return nil
}
