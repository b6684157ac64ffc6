package observer

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubeproof/kubeproof/contract/cluster"
)

// NodeFile reads a file, or lists a directory, on a node after every step
// (needs NodeExec). A path inside a place of a node's layout
// (/etc/cni/net.d, /opt/cni/bin, /var/lib/kubelet, /var/log/pods) is a
// claim about where a node keeps things: it is read on a provider whose
// nodes keep that place where Kubernetes' documentation says, and is not
// checkable, naming where the provider keeps it, on one whose nodes keep
// it elsewhere. A path that begins with the place's name in braces
// ({kubeletRoot}/pods) reads the provider's directory wherever it is.
type NodeFile struct {
	Where `json:",inline"`
	// Path is absolute; {uid} in it is the Pod's UID, {namespace} the
	// probe's namespace.
	Path string `json:"path"`
}

// NodeFileEvidence is what a nodeFile observer records.
type NodeFileEvidence struct {
	// Path is the path read, the Pod's UID as {uid} and the namespace as
	// {namespace}.
	Path string `json:"path"`
	// Exists, Dir, Content and Entries are as the last read found them:
	// whether the path exists, whether it is a directory, a file's content
	// (its first 64 KiB) and a directory's entries (sorted).
	Exists  bool     `json:"exists"`
	Dir     bool     `json:"dir"`
	Content string   `json:"content"`
	Entries []string `json:"entries"`
	// EverEntries are every entry a read of the directory found, sorted:
	// what it held while it existed, when it is gone at the end.
	EverEntries []string `json:"everEntries"`
	// ExistedAfter names the steps after which it existed; ReadAfter those
	// after which it was read (not before the Pod was on a node).
	ExistedAfter []string `json:"existedAfter"`
	ReadAfter    []string `json:"readAfter"`
}

func (n *NodeFile) Validate() []string {
	var errs []string
	if !strings.HasPrefix(n.Path, "/") && !strings.HasPrefix(n.Path, "{") {
		errs = append(errs, fmt.Sprintf("nodeFile path %q must be absolute, or begin with a place of the node's layout ({kubeletRoot}/pods)", n.Path))
	}
	if slices.Contains(strings.Split(n.Path, "/"), "..") {
		errs = append(errs, fmt.Sprintf("nodeFile path %q must not contain ..", n.Path))
	}
	if strings.Contains(n.Path, "{uid}") && n.Pod == "" {
		errs = append(errs, "nodeFile path has {uid}: name the pod whose UID it is")
	}
	if strings.HasPrefix(n.Path, "{") {
		if p, _ := cluster.ResolveNodePath(n.Path, cluster.StandardNodeLayout); !p.Placeholder {
			errs = append(errs, fmt.Sprintf("nodeFile path %q: a placeholder at its start names a place of the layout (%s)", n.Path, layoutNames()))
		}
	}
	return errs
}

func layoutNames() string {
	var out []string
	for _, e := range cluster.LayoutEntries {
		out = append(out, "{"+e.Name+"}")
	}
	return strings.Join(out, ", ")
}

func (n *NodeFile) Evidence() reflect.Type { return reflect.TypeFor[NodeFileEvidence]() }

// FieldNames are the fields a wait step waits on (polling the node: a
// file has no watch).
func (n *NodeFile) FieldNames() []string { return []string{"content", "dir", "entries", "exists"} }

func (n *NodeFile) Explain(name string, put Explainer) {
	put(name, "%s on the node, read after every step.", n.Path)
	put(name+".path", "The path read, the Pod's UID as {uid}.")
	put(name+".exists", "Whether %s existed when last read.", n.Path)
	put(name+".dir", "Whether it was a directory.")
	put(name+".content", "A file's content (its first 64 KiB); empty for a directory.")
	put(name+".entries", "A directory's entries, sorted.")
	put(name+".entries.0", "One entry's name.")
	put(name+".everEntries", "Every entry a read of the directory found, sorted.")
	put(name+".everEntries.0", "One entry's name.")
	put(name+".existedAfter", "The steps after which %s existed.", n.Path)
	put(name+".existedAfter.0", "One step's name.")
	put(name+".readAfter", "The steps after which it was read (a Pod's node is known once the Pod is bound).")
	put(name+".readAfter.0", "One step's name.")
}

// nodeFileRecorder reads a path on a node after each step.
type nodeFileRecorder struct {
	env   *Env
	place placeTracker
	path  cluster.NodePath
	ev    NodeFileEvidence
	err   error
}

func (n *NodeFile) Start(_ context.Context, env *Env) (Recorder, error) {
	if env.Cluster.NodeLayout == nil {
		return nil, fmt.Errorf("the %s provider does not say where its nodes keep things, so %s cannot be read as a node's", env.Cluster.Provider, n.Path)
	}
	p, err := cluster.ResolveNodePath(n.Path, *env.Cluster.NodeLayout)
	if err != nil {
		return nil, err
	}
	return &nodeFileRecorder{env: env, place: placeTracker{where: n.Where}, path: p,
		ev: NodeFileEvidence{Entries: []string{}, EverEntries: []string{}, ExistedAfter: []string{}, ReadAfter: []string{}}}, nil
}

// read reads the path once; ok is false when there was nothing to read
// yet (the Pod not on a node).
func (r *nodeFileRecorder) read(ctx context.Context) (ev NodeFileEvidence, ok bool, err error) {
	node, uid, ok, err := r.place.place(ctx, r.env)
	if err != nil || !ok {
		return ev, false, err
	}
	path := strings.ReplaceAll(strings.ReplaceAll(r.path.Path, "{uid}", uid), "{namespace}", r.env.Namespace)
	const script = `if [ -d "$1" ]; then echo dir; ls -1A "$1"; elif [ -e "$1" ]; then echo file; head -c 65536 "$1"; else echo none; fi`
	out, err := r.env.onNode(ctx, node, "sh", "-c", script, "sh", path)
	if err != nil {
		return ev, false, fmt.Errorf("read %s on node %s: %w", path, node, err)
	}
	kind, rest, _ := strings.Cut(string(out), "\n")
	ev.Path = r.env.placeholders(path, uid)
	ev.Entries = []string{}
	switch kind {
	case "dir":
		ev.Exists, ev.Dir = true, true
		ev.Entries = strings.Fields(rest)
		slices.Sort(ev.Entries)
	case "file":
		ev.Exists, ev.Content = true, rest
	}
	return ev, true, nil
}

func (r *nodeFileRecorder) AfterStep(ctx context.Context, step string) {
	if r.err != nil {
		return
	}
	ev, ok, err := r.read(ctx)
	if err != nil {
		r.err = err
		return
	}
	if !ok {
		return
	}
	ev.ExistedAfter, ev.ReadAfter = r.ev.ExistedAfter, append(r.ev.ReadAfter, step)
	ev.EverEntries = r.ev.EverEntries
	for _, e := range ev.Entries {
		if !slices.Contains(ev.EverEntries, e) {
			ev.EverEntries = append(ev.EverEntries, e)
		}
	}
	slices.Sort(ev.EverEntries)
	if ev.Exists {
		ev.ExistedAfter = append(ev.ExistedAfter, step)
	}
	r.ev = ev
}

// WaitField reads the path every 250 ms until field holds: a file on a
// node offers no watch.
func (r *nodeFileRecorder) WaitField(ctx context.Context, timeout time.Duration, what, field string, holds func(any) bool) error {
	var last any = "nothing read yet"
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ev, ok, err := r.read(ctx)
		if err != nil || !ok {
			return false, err
		}
		v := jsonValue(ev).(map[string]any)[field]
		last = v
		return holds(v), nil
	})
	if err != nil {
		return fmt.Errorf("waited %s for %s; last seen: %s = %v: %w", timeout, what, field, last, err)
	}
	return nil
}

func (r *nodeFileRecorder) WaitDeleted(context.Context, time.Duration, string) error {
	return fmt.Errorf("a nodeFile observer waits on a field (exists: false), not deleted")
}

func (r *nodeFileRecorder) Evidence() (any, error) {
	if r.err == nil && len(r.ev.ReadAfter) == 0 {
		return nil, fmt.Errorf("%s was never read: the Pod %s was on no node after any step", r.path.Path, r.place.where.Pod)
	}
	return r.ev, r.err
}

func (r *nodeFileRecorder) Stop() {}
