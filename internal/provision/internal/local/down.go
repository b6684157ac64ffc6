package local

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kubeproof/kubeproof/internal/exitcode"
	"github.com/kubeproof/kubeproof/internal/provision/internal/clusterregistry"
	"github.com/kubeproof/kubeproof/internal/provision/internal/hostchange"
	"github.com/kubeproof/kubeproof/internal/provision/internal/process"
)

// Down removes the cluster: its processes, containers, mounts, network
// namespace (with its bridge and iptables rules), cgroups, files, and the
// host changes Up recorded. It works from the state file when there is one
// and from the cluster's name otherwise, so it also cleans up after a crash.
func (p *Provider) Down(ctx context.Context) error {
	l, pr := p.l, p.cfg.Progress
	if os.Geteuid() != 0 {
		return exitcode.Errorf(exitcode.Permission, "removing a local cluster needs root (run it with sudo)")
	}
	st, err := loadState(l.stateFile())
	if err != nil && !isNotExist(err) {
		pr.Infof("state file unreadable (%v): cleaning up by name", err)
	}
	if st == nil && !p.leftovers() {
		pr.Infof("cluster %q does not exist: nothing to remove", p.cfg.Name)
		return nil
	}
	done := pr.Step("removing cluster %q", p.cfg.Name)
	var errs []error
	add := func(e ...error) {
		for _, err := range e {
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	procs := p.processes(st)
	cg := p.nodeCgroup(st)
	sandboxes := p.sandboxes()
	// The node agents first, so that nothing restarts containers.
	add(stopAll(procs, 5*time.Second, Kubelet, KubeProxy)...)
	// Containers: everything in our cgroups.
	add(killAll(cg.Procs())...)
	// Shims of our containerd, then containerd itself.
	add(p.killShims()...)
	add(stopAll(procs, 5*time.Second, Containerd)...)
	// The control plane, API server before etcd.
	add(stopAll(procs, 5*time.Second, Scheduler, ControllerManager)...)
	add(stopAll(procs, 10*time.Second, APIServer)...)
	// Every etcd member, however many the cluster was made with.
	var members []string
	for name := range procs {
		if name == Etcd || strings.HasPrefix(name, Etcd+"-") {
			members = append(members, name)
		}
	}
	add(stopAll(procs, 10*time.Second, members...)...)
	// The registry, which runs on the host, not in the node.
	add(stopAll(procs, 5*time.Second, Registry)...)
	// Whatever still runs in the node's network namespace.
	add(killAll(p.netnsProcs())...)

	add(hostchange.UnmountUnder(l.dataDir(), l.runDir())...)
	add(teardownNetwork(ctx, l))
	add(cg.Remove(ctx, savedControllers, hostHolder(p.cfg.Name))...)
	for _, d := range []string{l.dataDir(), l.runDir()} {
		if err := os.RemoveAll(d); err != nil {
			add(fmt.Errorf("remove %s: %w", d, err))
		}
	}
	add(hostSysctls.Release(hostHolder(p.cfg.Name)))
	add(hostModules.Release(hostHolder(p.cfg.Name)))
	add(cleanHostPaths(st, l, sandboxes)...)
	if len(errs) > 0 {
		err := fmt.Errorf("cluster %q was not removed cleanly: %w", p.cfg.Name, errors.Join(errs...))
		done(err)
		return exitcode.With(exitcode.ClusterSetup, err)
	}
	done(nil)
	return nil
}

// sandboxes lists the IDs of the pod sandboxes containerd knows (one task
// directory each), and those its shims serve, before either goes away.
func (p *Provider) sandboxes() []string {
	var ids []string
	entries, _ := os.ReadDir(filepath.Join(p.l.containerdState(), "io.containerd.runtime.v2.task", "k8s.io"))
	for _, e := range entries {
		ids = append(ids, e.Name())
	}
	for _, pid := range p.shims() {
		if args, err := process.Args(pid); err == nil {
			ids = append(ids, flagValue(args, "-id"))
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// shims lists the containerd shims that serve our containerd.
func (p *Provider) shims() []int {
	addr := p.l.containerdSock()
	return process.Find(func(args []string) bool {
		return len(args) > 0 && strings.HasPrefix(filepath.Base(args[0]), "containerd-shim") && flagValue(args, "-address") == addr
	})
}

// leftovers reports whether anything of the cluster remains without a state
// file: its directories, network namespace, interface or processes.
func (p *Provider) leftovers() bool {
	l := p.l
	for _, path := range []string{l.dataDir(), l.runDir(), l.netnsPath()} {
		if _, err := os.Stat(path); err == nil {
			return true
		}
	}
	if _, err := os.Stat("/sys/class/net/" + l.hostVeth()); err == nil {
		return true
	}
	return len(p.processes(nil)) > 0
}

// processes returns the cluster's live processes by component: those the
// state file recorded, and any other process whose command line names the
// cluster's directories (found even when the state file is lost).
func (p *Provider) processes(st *state) map[string][]int {
	out := map[string][]int{}
	seen := map[int]bool{}
	if st != nil {
		for _, r := range st.Processes {
			if r.Alive() {
				out[r.Name] = append(out[r.Name], r.PID)
				seen[r.PID] = true
			}
		}
	}
	marker := p.l.dataDir() + "/"
	for _, pid := range process.Find(func(args []string) bool {
		return slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, marker) })
	}) {
		if seen[pid] || pid == os.Getpid() {
			continue
		}
		args, _ := process.Args(pid)
		out[componentOf(args)] = append(out[componentOf(args)], pid)
	}
	return out
}

// componentOf names the component a command line runs (the program's base
// name, after nsenter's arguments; Registry for kubeproof serving one).
func componentOf(args []string) string {
	if clusterregistry.IsCommand(args) {
		return Registry
	}
	for i, a := range args {
		if a == "--" && i+1 < len(args) {
			return filepath.Base(args[i+1])
		}
	}
	if len(args) == 0 {
		return ""
	}
	return filepath.Base(args[0])
}

// stopAll stops the components' processes in parallel.
func stopAll(procs map[string][]int, grace time.Duration, names ...string) []error {
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, n := range names {
		for _, pid := range procs[n] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := process.Terminate(pid, grace); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("stop %s: %w", n, err))
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	return errs
}

func killAll(pids []int) []error {
	var errs []error
	for _, pid := range pids {
		if pid == os.Getpid() {
			continue
		}
		if err := process.Kill(pid, 10*time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// killShims kills the containerd shims that serve our containerd and removes
// their sockets, which containerd 1.6 keeps under /run/containerd/s whatever
// its configured state directory: sha256 of "<address>/<namespace>/<id>".
func (p *Provider) killShims() []error {
	addr := p.l.containerdSock()
	var errs []error
	for _, pid := range p.shims() {
		args, _ := process.Args(pid)
		ns, id := flagValue(args, "-namespace"), flagValue(args, "-id")
		if err := process.Kill(pid, 10*time.Second); err != nil {
			errs = append(errs, err)
		}
		if ns != "" && id != "" {
			sock := fmt.Sprintf("/run/containerd/s/%x", sha256.Sum256([]byte(filepath.Join(addr, ns, id))))
			if err := os.Remove(sock); err != nil && !os.IsNotExist(err) {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

// netnsProcs lists processes in the node's network namespace.
func (p *Provider) netnsProcs() []int {
	ino := nsInode(p.l.netnsPath())
	if ino == 0 {
		return nil
	}
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if nsInode(filepath.Join("/proc", e.Name(), "ns", "net")) == ino {
			pids = append(pids, pid)
		}
	}
	return pids
}

// nodeCgroup is how the node's cgroups were made: as the state file says,
// or, without one, as Up would make them on this machine now.
func (p *Provider) nodeCgroup(st *state) hostchange.NodeCgroup {
	if st != nil && st.Cgroup.Name != "" {
		return st.Cgroup
	}
	n := hostchange.NodeCgroup{Name: p.l.cgroupName()}
	if host, err := hostchange.ReadCgroupHost(); err == nil {
		// A host without the controllers a node needs still gets its
		// cgroups removed by name.
		n, _ = hostchange.PlanNodeCgroup(host, p.l.cgroupName())
	}
	return n
}
