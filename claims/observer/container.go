package observer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/kubeproof/kubeproof/kube/noderuntime"
)

// Container reads, after every step, what the kernel of a Pod's node shows
// of the Pod's sandbox and of the containers named (needs NodeExec): each
// one's main process (its PID on the node and in its own PID namespace,
// its command line), its namespaces and its cgroup, with files of that
// cgroup.
type Container struct {
	// Pod is a Pod of the probe.
	Pod string `json:"pod"`
	// Containers are the names of the Pod's containers to read (init
	// containers too); the sandbox is always read.
	Containers []string `json:"containers"`
	// CgroupFiles maps a name (letters, digits) to a file of each
	// container's cgroup to read (memoryMax: memory.max, cpuMax: cpu.max;
	// on cgroup v1 memory.limit_in_bytes...).
	CgroupFiles map[string]string `json:"cgroupFiles,omitempty"`
}

// Namespaces are a process's namespaces, as /proc/PID/ns names them
// (net:[4026532281]): two processes share one when the names are equal.
type Namespaces struct {
	Net    string `json:"net"`
	PID    string `json:"pid"`
	IPC    string `json:"ipc"`
	UTS    string `json:"uts"`
	Mnt    string `json:"mnt"`
	Cgroup string `json:"cgroup"`
}

// namespaceTypes are Namespaces' fields by their JSON names.
var namespaceTypes = []string{"net", "pid", "ipc", "uts", "mnt", "cgroup"}

func (n Namespaces) of(t string) string {
	return map[string]string{"net": n.Net, "pid": n.PID, "ipc": n.IPC, "uts": n.UTS, "mnt": n.Mnt, "cgroup": n.Cgroup}[t]
}

func (c *Container) Validate() []string {
	var errs []string
	if c.Pod == "" || len(c.Containers) == 0 {
		errs = append(errs, "container needs a pod and the names of its containers to read")
	}
	for _, n := range c.Containers {
		if !fieldNameRE.MatchString(n) || n == "sandbox" || n == "shared" || n == "cgroupVersion" {
			errs = append(errs, fmt.Sprintf("container %q: read containers whose names are letters and digits (not sandbox, shared or cgroupVersion)", n))
		}
	}
	for name, file := range c.CgroupFiles {
		if !fieldNameRE.MatchString(name) {
			errs = append(errs, fmt.Sprintf("cgroup file name %q must be letters and digits", name))
		}
		if file == "" || strings.Contains(file, "/") {
			errs = append(errs, fmt.Sprintf("cgroup file %s: %q is a file of the cgroup's directory (memory.max)", name, file))
		}
	}
	return errs
}

func (c *Container) fileNames() []string { return slices.Sorted(maps.Keys(c.CgroupFiles)) }

// processType is the evidence of one container (or the sandbox).
func (c *Container) processType() reflect.Type {
	f := func(name, tag string, t reflect.Type) reflect.StructField {
		return reflect.StructField{Name: name, Type: t, Tag: reflect.StructTag(fmt.Sprintf(`json:%q`, tag))}
	}
	return reflect.StructOf([]reflect.StructField{
		f("Running", "running", reflect.TypeFor[bool]()),
		f("PID", "pid", reflect.TypeFor[int]()),
		f("PIDs", "pids", reflect.TypeFor[[]int]()),
		f("PIDChanges", "pidChanges", reflect.TypeFor[int]()),
		f("InnerPID", "innerPID", reflect.TypeFor[int]()),
		f("Command", "command", reflect.TypeFor[string]()),
		f("Namespaces", "namespaces", reflect.TypeFor[Namespaces]()),
		f("SharesWithSandbox", "sharesWithSandbox", reflect.TypeFor[[]string]()),
		f("Cgroup", "cgroup", reflect.TypeFor[string]()),
		f("MemoryLimit", "memoryLimit", reflect.TypeFor[float64]()),
		f("Files", "files", structOf(c.fileNames(), reflect.TypeFor[string]())),
	})
}

func (c *Container) Evidence() reflect.Type {
	p := c.processType()
	return structOf(c.Containers, p,
		reflect.StructField{Name: "Sandbox", Type: p, Tag: `json:"sandbox"`},
		reflect.StructField{Name: "Shared", Type: reflect.TypeFor[[]string](), Tag: `json:"shared"`},
		reflect.StructField{Name: "CgroupVersion", Type: reflect.TypeFor[int](), Tag: `json:"cgroupVersion"`})
}

func (c *Container) Explain(n string, put Explainer) {
	put(n, "Pod %s's sandbox and containers as the kernel of its node shows them, read after every step.", c.Pod)
	put(n+".shared", "The namespaces (net, pid, ipc, uts, mnt, cgroup) that the sandbox and every container named share, as last read (empty if one was never read).")
	put(n+".shared.0", "One namespace's type.")
	put(n+".cgroupVersion", "The node's cgroup version: 2 for the unified hierarchy, 1 otherwise.")
	for _, who := range append([]string{"sandbox"}, c.Containers...) {
		p := n + "." + who
		what := "container " + who
		if who == "sandbox" {
			what = "the Pod's sandbox (its pause process)"
		}
		put(p, "The main process of %s, as last read while it ran.", what)
		put(p+".running", "Whether %s had a running process when the runtime was last asked.", what)
		put(p+".pid", "Its main process's PID on the node.")
		put(p+".pids", "Every main PID it was seen with, in order: a new one is a new process.")
		put(p+".pids.0", "One PID.")
		put(p+".pidChanges", "How many times its main process changed between reads.")
		put(p+".innerPID", "Its main process's PID in its own PID namespace (1 when the namespace is its own).")
		put(p+".command", "Its main process's command line, the arguments joined by spaces.")
		put(p+".namespaces", "Its namespaces, as /proc/PID/ns names them (net:[4026532281]).")
		for _, t := range namespaceTypes {
			put(p+".namespaces."+t, "Its %s namespace.", t)
		}
		put(p+".sharesWithSandbox", "The namespaces it shares with the sandbox.")
		put(p+".sharesWithSandbox.0", "One namespace's type.")
		put(p+".cgroup", "Its cgroup (cgroup v1: its memory controller's), the Pod's UID as {uid} and the container's ID as {id}.")
		put(p+".memoryLimit", "Its cgroup's memory limit in bytes (memory.max, or memory.limit_in_bytes on cgroup v1); -1 for none.")
		put(p+".files", "The cgroup files read.")
		for _, f := range c.fileNames() {
			put(p+".files."+f, "Its cgroup's %s.", c.CgroupFiles[f])
		}
	}
}

// procRead is one read of one process.
type procRead struct {
	pid, innerPID int
	command       string
	ns            Namespaces
	cgroup        string // as the kernel wrote it
	memoryLimit   float64
	files         map[string]string
}

type containerRecorder struct {
	env     *Env
	spec    Container
	place   placeTracker
	last    map[string]*procRead // the last read of each, by name, sandbox included
	running map[string]bool      // whether each ran when last asked
	pids    map[string][]int
	version int
	read    bool
	err     error
}

func (c *Container) Start(_ context.Context, env *Env) (Recorder, error) {
	return &containerRecorder{env: env, spec: *c, place: placeTracker{where: Where{Pod: c.Pod}},
		last: map[string]*procRead{}, running: map[string]bool{}, pids: map[string][]int{}}, nil
}

func (r *containerRecorder) AfterStep(ctx context.Context, _ string) {
	if r.err != nil {
		return
	}
	if err := r.readAll(ctx); err != nil {
		r.err = err
	}
}

func (r *containerRecorder) readAll(ctx context.Context) error {
	node, _, ok, err := r.place.place(ctx, r.env)
	if err != nil || !ok {
		return err
	}
	cs, err := noderuntime.Containers(ctx, r.env.Cluster, node, r.env.Namespace, r.spec.Pod)
	if err != nil {
		return fmt.Errorf("ask the runtime of node %s: %w", node, err)
	}
	tasks, err := noderuntime.Tasks(ctx, r.env.Cluster, node)
	if err != nil {
		return fmt.Errorf("ask the runtime of node %s for its tasks: %w", node, err)
	}
	// The newest container of each name (cs is oldest first).
	ids := map[string]string{}
	for _, c := range cs {
		name := c.Name
		if c.Kind == "sandbox" {
			name = "sandbox"
		}
		ids[name] = c.ID
	}
	r.read = true
	for _, who := range append([]string{"sandbox"}, r.spec.Containers...) {
		t, ok := tasks[ids[who]]
		r.running[who] = ok && t.Status == "RUNNING"
		if !r.running[who] {
			continue
		}
		p, err := r.readProcess(ctx, node, t.PID)
		if errors.Is(err, errProcessGone) {
			// It ended between the runtime's answer and the read (a Pod
			// being deleted): not running, as the next read would say.
			r.running[who] = false
			continue
		}
		if err != nil {
			return fmt.Errorf("read %s of Pod %s on node %s: %w", who, r.spec.Pod, node, err)
		}
		p.cgroup = strings.ReplaceAll(p.cgroup, ids[who], "{id}")
		r.last[who] = p
		if ps := r.pids[who]; len(ps) == 0 || ps[len(ps)-1] != t.PID {
			r.pids[who] = append(ps, t.PID)
		}
	}
	return nil
}

// procScript reads process $1: the cgroup filesystem's type, its command
// line, PIDs, namespaces and cgroups. A process that ended while it was
// read (its /proc directory gone when its cgroup could not be read) gives
// the line X, not a failure; a read that fails while it runs fails.
const procScript = `p=/proc/$1
echo "V $(stat -fc %T /sys/fs/cgroup)"
echo "C $(tr '\0' ' ' < $p/cmdline)"
echo "N $(sed -n 's/^NSpid:[[:space:]]*//p' $p/status)"
for ns in net pid ipc uts mnt cgroup; do echo "S $ns $(readlink $p/ns/$ns)"; done
sed 's/^/G /' $p/cgroup || { [ -e $p ] && exit 1; echo X; }`

// errProcessGone is a process that ended while procScript read it.
var errProcessGone = errors.New("the process ended while it was read")

// gone says whether procScript's output says the process ended.
func gone(out []byte) bool {
	return slices.Contains(strings.Split(string(out), "\n"), "X")
}

// readProcess reads one process on node: its command line, PIDs,
// namespaces and cgroup, then the files of its cgroup.
func (r *containerRecorder) readProcess(ctx context.Context, node string, pid int) (*procRead, error) {
	out, err := r.env.onNode(ctx, node, "sh", "-c", procScript, "sh", strconv.Itoa(pid))
	if err != nil {
		return nil, err
	}
	if gone(out) {
		return nil, errProcessGone
	}
	p := &procRead{pid: pid, files: map[string]string{}}
	ns := map[string]string{}
	cgroups := map[string]string{} // controller (or "" for v2) -> path
	for _, line := range strings.Split(string(out), "\n") {
		tag, rest, _ := strings.Cut(line, " ")
		switch tag {
		case "V":
			r.version = 1
			if rest == "cgroup2fs" {
				r.version = 2
			}
		case "C":
			p.command = strings.TrimSpace(rest)
		case "N":
			f := strings.Fields(rest)
			if len(f) > 0 {
				p.innerPID, _ = strconv.Atoi(f[len(f)-1])
			}
		case "S":
			t, v, _ := strings.Cut(rest, " ")
			ns[t] = v
		case "G":
			// hierarchy-ID:controllers:path
			parts := strings.SplitN(rest, ":", 3)
			if len(parts) == 3 {
				for _, c := range strings.Split(parts[1], ",") {
					cgroups[c] = parts[2]
				}
			}
		}
	}
	p.ns = Namespaces{Net: ns["net"], PID: ns["pid"], IPC: ns["ipc"], UTS: ns["uts"], Mnt: ns["mnt"], Cgroup: ns["cgroup"]}
	p.cgroup = cgroups[""]
	if r.version == 1 {
		p.cgroup = cgroups["memory"]
	}
	files := map[string]string{"memoryLimit": "memory.max"}
	if r.version == 1 {
		files["memoryLimit"] = "memory.limit_in_bytes"
	}
	maps.Copy(files, r.spec.CgroupFiles)
	read, err := r.readCgroupFiles(ctx, node, cgroups, files)
	if err != nil {
		return nil, err
	}
	p.memoryLimit = memoryLimit(read["memoryLimit"])
	for name := range r.spec.CgroupFiles {
		p.files[name] = read[name]
	}
	return p, nil
}

// readCgroupFiles reads files (name -> file) of a process's cgroups. On
// cgroup v1 a file belongs to the controller its name begins with (memory.
// limit_in_bytes to memory), mounted at /sys/fs/cgroup/<controllers>. A
// node that is a container may see its own cgroup as the root: the path is
// then tried with its leading directories taken off, one at a time.
func (r *containerRecorder) readCgroupFiles(ctx context.Context, node string, cgroups map[string]string, files map[string]string) (map[string]string, error) {
	args := []string{}
	names := slices.Sorted(maps.Keys(files))
	for _, name := range names {
		file := files[name]
		dir, rel := "/sys/fs/cgroup", cgroups[""]
		if r.version == 1 {
			ctrl, _, _ := strings.Cut(file, ".")
			rel = cgroups[ctrl]
			dir += "/" + ctrl
		}
		args = append(args, dir, rel, file)
	}
	const script = `while [ $# -ge 3 ]; do d=$1 rel=$2 f=$3; shift 3; v=MISSING
while :; do if [ -r "$d$rel/$f" ]; then v=$(tr '\n' ' ' < "$d$rel/$f"); break; fi
case "$rel" in /*/*) rel=/${rel#/*/};; *) break;; esac; done
echo "$v"; done`
	out, err := r.env.onNode(ctx, node, append([]string{"sh", "-c", script, "sh"}, args...)...)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	read := map[string]string{}
	for i, name := range names {
		if i < len(lines) {
			read[name] = strings.TrimSpace(lines[i])
		}
	}
	return read, nil
}

// memoryLimit reads a memory limit file: bytes, or -1 for none ("max" on
// v2, a page-aligned maximum of the kernel on v1).
func memoryLimit(s string) float64 {
	if s == "max" {
		return -1
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	if v >= 1<<62 {
		return -1
	}
	return v
}

func (r *containerRecorder) Evidence() (any, error) {
	if r.err != nil {
		return nil, r.err
	}
	if !r.read {
		return nil, fmt.Errorf("never read: Pod %s was on no node after any step", r.spec.Pod)
	}
	_, uid, _, _ := r.place.place(context.Background(), r.env)
	out := map[string]any{"cgroupVersion": r.version}
	sandbox := r.last["sandbox"]
	read := []*procRead{}
	for _, who := range append([]string{"sandbox"}, r.spec.Containers...) {
		p := r.last[who]
		files := map[string]string{}
		for _, f := range r.spec.fileNames() {
			files[f] = ""
		}
		ev := map[string]any{"running": r.running[who], "pid": 0, "pids": append([]int{}, r.pids[who]...),
			"pidChanges": max(len(r.pids[who])-1, 0), "innerPID": 0, "command": "", "namespaces": Namespaces{},
			"sharesWithSandbox": []string{}, "cgroup": "", "memoryLimit": 0, "files": files}
		if p != nil {
			read = append(read, p)
			shares := []string{}
			for _, t := range namespaceTypes {
				if sandbox != nil && p.ns.of(t) != "" && p.ns.of(t) == sandbox.ns.of(t) {
					shares = append(shares, t)
				}
			}
			maps.Copy(files, p.files)
			ev["pid"], ev["innerPID"], ev["command"], ev["namespaces"] = p.pid, p.innerPID, p.command, p.ns
			ev["sharesWithSandbox"], ev["cgroup"], ev["memoryLimit"] = shares, r.env.placeholders(p.cgroup, uid), p.memoryLimit
		}
		out[who] = ev
	}
	shared := []string{}
	for _, t := range namespaceTypes {
		if len(read) == len(r.spec.Containers)+1 && !slices.ContainsFunc(read, func(p *procRead) bool { return p.ns.of(t) != read[0].ns.of(t) }) {
			shared = append(shared, t)
		}
	}
	out["shared"] = shared
	return out, nil
}

func (r *containerRecorder) Stop() {}
