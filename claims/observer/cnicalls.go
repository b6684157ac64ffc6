package observer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/kubeproof/kubeproof/contract/cnitrace"
)

// CNICalls reads what the pod network's plugins were called with for a
// Pod, on its node: every call kubeproof-cni-trace, first and last in the
// node's plugin chain, logged (needs NodeExec, and a provider whose pod
// network has the trace plugin: local and kind).
type CNICalls struct {
	// Pod is a Pod of the probe.
	Pod string `json:"pod"`
}

// CNICallsEvidence is what a cniCalls observer records.
type CNICallsEvidence struct {
	// Calls are the plugin chain's calls for the Pod, in order: each logged
	// at the chain's first and at its last position.
	Calls []CNICall `json:"calls"`
	// Commands are the distinct successive commands (ADD, DEL, CHECK).
	Commands []string `json:"commands"`
	// Count is how many calls were logged.
	Count int `json:"count"`
}

// CNICall is one call of the plugin chain for the Pod, as the trace
// plugin at one position received it.
type CNICall struct {
	// Command is ADD, DEL or CHECK; Position first or last in the chain.
	Command  string `json:"command"`
	Position string `json:"position"`
	// At is when the plugin ran (ms after the probe's start).
	At float64 `json:"at"`
	// Network is the network's name in the configuration it received;
	// Netns the network namespace and IfName the interface it was given.
	Network string `json:"network"`
	Netns   string `json:"netns"`
	IfName  string `json:"ifName"`
	// IPs are the addresses the plugins before it returned (at the last
	// position of an ADD).
	IPs []string `json:"ips"`
	// Exe is the plugin's own program; CallerComm the name of the process
	// that ran it (the container runtime).
	Exe        string `json:"exe"`
	CallerComm string `json:"callerComm"`
}

func (c *CNICalls) Validate() []string {
	if c.Pod == "" {
		return []string{"cniCalls needs a pod"}
	}
	return nil
}

func (c *CNICalls) Evidence() reflect.Type { return reflect.TypeFor[CNICallsEvidence]() }

func (c *CNICalls) Explain(n string, put Explainer) {
	put(n, "The CNI calls for Pod %s, as the trace plugin first and last in its node's plugin chain logged them.", c.Pod)
	put(n+".calls", "Every call for Pod %s, in order, once at each position of the chain.", c.Pod)
	put(n+".calls.0.command", "ADD, DEL or CHECK.")
	put(n+".calls.0.position", "first or last in the plugin chain.")
	put(n+".calls.0.at", "When the plugin ran (ms).")
	put(n+".calls.0.network", "The network's name in the configuration the plugin received.")
	put(n+".calls.0.netns", "The network namespace it was given (CNI_NETNS).")
	put(n+".calls.0.ifName", "The interface name it was given (CNI_IFNAME).")
	put(n+".calls.0.ips", "At the last position of an ADD, the addresses the plugins before it returned.")
	put(n+".calls.0.ips.0", "One address, with its prefix length.")
	put(n+".calls.0.exe", "The plugin's own program, as the runtime ran it; in the provider's CNI bin directory, {cniBinDir}/NAME.")
	put(n+".calls.0.callerComm", "The name of the process that ran the plugin.")
	put(n+".commands", "The distinct successive commands.")
	put(n+".commands.0", "One command.")
	put(n+".count", "How many calls were logged.")
}

type cniCallsRecorder struct {
	env   *Env
	place placeTracker
	err   error
}

func (c *CNICalls) Start(_ context.Context, env *Env) (Recorder, error) {
	if env.Cluster.CNITraceLog == "" {
		return nil, fmt.Errorf("the %s provider's pod network has no kubeproof-cni-trace plugin logging its calls", env.Cluster.Provider)
	}
	return &cniCallsRecorder{env: env, place: placeTracker{where: Where{Pod: c.Pod}}}, nil
}

// AfterStep notes the Pod's node (and UID) while the Pod is there: the
// log is read at the end, when the Pod may be gone.
func (r *cniCallsRecorder) AfterStep(ctx context.Context, _ string) {
	if r.err == nil {
		_, _, _, r.err = r.place.place(ctx, r.env)
	}
}

func (r *cniCallsRecorder) Evidence() (any, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.place.node == "" {
		return nil, fmt.Errorf("never read: Pod %s was on no node after any step", r.place.where.Pod)
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.env.APITimeout)
	defer cancel()
	// Only the lines that name the Pod: the log holds every Pod's calls.
	pod := fmt.Sprintf(`"podName":%q`, r.place.where.Pod)
	raw, err := r.env.onNode(ctx, r.place.node, "sh", "-c", `grep -F -e "$1" "$2" || true`, "sh", pod, r.env.Cluster.CNITraceLog)
	if err != nil {
		return nil, fmt.Errorf("read the CNI calls on node %s: %w", r.place.node, err)
	}
	ev := CNICallsEvidence{Calls: []CNICall{}, Commands: []string{}}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		var c cnitrace.Call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("a line of %s on node %s: %w", r.env.Cluster.CNITraceLog, r.place.node, err)
		}
		if c.PodNamespace != r.env.Namespace || c.PodName != r.place.where.Pod {
			continue
		}
		ips := c.IPs
		if ips == nil {
			ips = []string{}
		}
		ev.Calls = append(ev.Calls, CNICall{Command: c.Command, Position: c.Position, At: r.env.Millis(c.At),
			Network: c.Network, Netns: c.Netns, IfName: c.IfName, IPs: ips, Exe: r.binDir(c.Exe), CallerComm: c.CallerComm})
		if len(ev.Commands) == 0 || ev.Commands[len(ev.Commands)-1] != c.Command {
			ev.Commands = append(ev.Commands, c.Command)
		}
	}
	ev.Count = len(ev.Calls)
	return ev, nil
}

// binDir writes a program in the provider's CNI bin directory as
// {cniBinDir}/NAME: where that directory is, is a fact of the provider's
// layout (a nodeFile observer of /opt/cni/bin decides a claim about it).
func (r *cniCallsRecorder) binDir(exe string) string {
	if l := r.env.Cluster.NodeLayout; l != nil && l.CNIBinDir != "" {
		if rest, ok := strings.CutPrefix(exe, l.CNIBinDir+"/"); ok {
			return "{cniBinDir}/" + rest
		}
	}
	return exe
}

func (r *cniCallsRecorder) Stop() {}
