package observer

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"

	"github.com/kubeproof/kubeproof/kube/noderuntime"
)

// Runtime asks the container runtime (containerd) of a Pod's node, after
// every step, which sandboxes and containers it holds for the Pod, and
// which images the node has (needs NodeExec): what the API server does not
// show, the sandbox first of all.
type Runtime struct {
	// Pod is a Pod of the probe.
	Pod string `json:"pod"`
}

// RuntimeEvidence is what a runtime observer records.
type RuntimeEvidence struct {
	// Containers are every sandbox and container the runtime held for the
	// Pod after some step, in the order they were created.
	Containers []RuntimeContainer `json:"containers"`
	// Kinds are their kinds in that order (sandbox, container).
	Kinds []string `json:"kinds"`
	// Names are their names in that order (a sandbox's is "sandbox").
	Names []string `json:"names"`
	// Sandboxes is how many sandboxes the Pod has had; Count how many
	// containers and sandboxes in all.
	Sandboxes int `json:"sandboxes"`
	Count     int `json:"count"`
	// Images are the names of the node's images after the last step it was
	// read after, sorted.
	Images []string `json:"images"`
	// ReadAfter names the steps after which the runtime was asked (not
	// before the Pod was on a node).
	ReadAfter []string `json:"readAfter"`
}

// RuntimeContainer is a sandbox or a container as the runtime holds it.
type RuntimeContainer struct {
	// Kind is sandbox or container.
	Kind string `json:"kind"`
	// Name is the container's name; "sandbox" for the sandbox.
	Name string `json:"name"`
	// Image is the image it runs (the sandbox's: the pause image).
	Image string `json:"image"`
	// At is when the runtime created it (ms after the probe's start).
	At float64 `json:"at"`
}

func (r *Runtime) Validate() []string {
	if r.Pod == "" {
		return []string{"runtime needs a pod"}
	}
	return nil
}

func (r *Runtime) Evidence() reflect.Type { return reflect.TypeFor[RuntimeEvidence]() }

func (r *Runtime) Explain(n string, put Explainer) {
	put(n, "Pod %s's sandboxes and containers as its node's container runtime held them, and the node's images.", r.Pod)
	put(n+".containers", "Every sandbox and container the runtime held for Pod %s after some step, in the order they were created.", r.Pod)
	put(n+".containers.0.kind", "sandbox or container.")
	put(n+".containers.0.name", "The container's name; sandbox for the sandbox.")
	put(n+".containers.0.image", "The image it runs (the sandbox's is the pause image).")
	put(n+".containers.0.at", "When the runtime created it (ms; the runtime's clock, to the nanosecond).")
	put(n+".kinds", "Their kinds, in the order they were created.")
	put(n+".kinds.0", "sandbox or container.")
	put(n+".names", "Their names, in the order they were created.")
	put(n+".names.0", "A container's name, or sandbox.")
	put(n+".sandboxes", "How many sandboxes Pod %s has had.", r.Pod)
	put(n+".count", "How many sandboxes and containers it has had in all.")
	put(n+".images", "The names of the node's images when last read, sorted.")
	put(n+".images.0", "One image's name.")
	put(n+".readAfter", "The steps after which the runtime was asked (once the Pod was on a node).")
	put(n+".readAfter.0", "One step's name.")
}

type runtimeRecorder struct {
	env    *Env
	place  placeTracker
	seen   map[string]noderuntime.Container
	images []string
	read   []string
	err    error
}

func (r *Runtime) Start(_ context.Context, env *Env) (Recorder, error) {
	return &runtimeRecorder{env: env, place: placeTracker{where: Where{Pod: r.Pod}}, seen: map[string]noderuntime.Container{}}, nil
}

func (rr *runtimeRecorder) AfterStep(ctx context.Context, step string) {
	if rr.err != nil {
		return
	}
	node, _, ok, err := rr.place.place(ctx, rr.env)
	if err != nil || !ok {
		rr.err = err
		return
	}
	ctx, cancel := context.WithTimeout(ctx, rr.env.APITimeout)
	defer cancel()
	cs, err := noderuntime.Containers(ctx, rr.env.Cluster, node, rr.env.Namespace, rr.place.where.Pod)
	if err != nil {
		rr.err = fmt.Errorf("ask the runtime of node %s: %w", node, err)
		return
	}
	for _, c := range cs {
		rr.seen[c.ID] = c
	}
	if rr.images, err = noderuntime.Images(ctx, rr.env.Cluster, node); err != nil {
		rr.err = fmt.Errorf("ask the runtime of node %s for its images: %w", node, err)
	}
	rr.read = append(rr.read, step)
}

func (rr *runtimeRecorder) Evidence() (any, error) {
	if rr.err != nil {
		return nil, rr.err
	}
	if len(rr.read) == 0 {
		return nil, fmt.Errorf("the runtime was never asked: Pod %s was on no node after any step", rr.place.where.Pod)
	}
	all := make([]noderuntime.Container, 0, len(rr.seen))
	for _, c := range rr.seen {
		all = append(all, c)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].CreatedAt.Before(all[j].CreatedAt) })
	ev := RuntimeEvidence{Containers: []RuntimeContainer{}, Kinds: []string{}, Names: []string{}, Images: slices.Clip(rr.images), ReadAfter: rr.read}
	if ev.Images == nil {
		ev.Images = []string{}
	}
	for _, c := range all {
		name := c.Name
		if c.Kind == "sandbox" {
			name = "sandbox"
			ev.Sandboxes++
		}
		ev.Containers = append(ev.Containers, RuntimeContainer{Kind: c.Kind, Name: name, Image: c.Image, At: rr.env.Millis(c.CreatedAt)})
		ev.Kinds = append(ev.Kinds, c.Kind)
		ev.Names = append(ev.Names, name)
	}
	ev.Count = len(all)
	return ev, nil
}

func (rr *runtimeRecorder) Stop() {}
