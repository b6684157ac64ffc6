package main

import (
	"bufio"
	"os"
	"strings"

	"github.com/kubeproof/kubeproof/contract/testapp"
)

// readProc reports what the kernel says about this process: the namespaces
// it is in (their /proc/self/ns links, equal for processes that share one),
// its seccomp mode and no_new_privs flag (/proc/self/status) and the
// hostname (its UTS namespace's).
func readProc() testapp.Proc {
	p := testapp.Proc{Namespaces: map[string]string{}}
	for _, ns := range []string{"net", "ipc", "uts", "pid", "mnt", "cgroup"} {
		if link, err := os.Readlink("/proc/self/ns/" + ns); err == nil {
			p.Namespaces[ns] = link
		}
	}
	p.Hostname, _ = os.Hostname()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		p.Error = err.Error()
		return p
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		key, value, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue
		}
		switch value = strings.TrimSpace(value); key {
		case "Seccomp":
			p.Seccomp = value
		case "NoNewPrivs":
			p.NoNewPrivs = value
		}
	}
	return p
}
