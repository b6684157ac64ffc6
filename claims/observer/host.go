package observer

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Host reads facts of a node's host that decide what the kubelet can do
// there (needs NodeExec): its cgroup version, whether its kernel has
// AppArmor or SELinux enabled, its kernel and OS. A claim whose sentence
// holds on one kind of host only waits on one of them first: a wait step
// whose condition fails stops the probe, and its claims are not checkable
// on this host, naming the fact.
type Host struct {
	Where `json:",inline"`
}

// HostEvidence is what a host observer records.
type HostEvidence struct {
	// Node is the node read.
	Node string `json:"node"`
	// CgroupVersion is 2 when /sys/fs/cgroup is the unified hierarchy, 1
	// otherwise.
	CgroupVersion int `json:"cgroupVersion"`
	// AppArmor: the kernel has AppArmor enabled
	// (/sys/module/apparmor/parameters/enabled is Y).
	AppArmor bool `json:"appArmor"`
	// SELinux: the kernel has SELinux enabled (/sys/fs/selinux is
	// mounted); SELinuxEnforcing: in enforcing mode.
	SELinux          bool `json:"seLinux"`
	SELinuxEnforcing bool `json:"seLinuxEnforcing"`
	// Kernel is the kernel's release (uname -r); OS the node's
	// /etc/os-release PRETTY_NAME.
	Kernel string `json:"kernel"`
	OS     string `json:"os"`
}

func (h *Host) Validate() []string { return nil }

func (h *Host) Evidence() reflect.Type { return reflect.TypeFor[HostEvidence]() }

// FieldNames are the facts a wait step can hold to a condition.
func (h *Host) FieldNames() []string {
	return []string{"appArmor", "cgroupVersion", "kernel", "os", "seLinux", "seLinuxEnforcing"}
}

func (h *Host) Explain(n string, put Explainer) {
	put(n, "Facts of a node's host, read once the node is known.")
	put(n+".node", "The node read.")
	put(n+".cgroupVersion", "2 when /sys/fs/cgroup is the unified hierarchy (cgroup v2), 1 otherwise.")
	put(n+".appArmor", "Whether the kernel has AppArmor enabled.")
	put(n+".seLinux", "Whether the kernel has SELinux enabled.")
	put(n+".seLinuxEnforcing", "Whether SELinux is in enforcing mode.")
	put(n+".kernel", "The kernel's release (uname -r).")
	put(n+".os", "The node's operating system (/etc/os-release PRETTY_NAME).")
}

type hostRecorder struct {
	env   *Env
	place placeTracker
	ev    *HostEvidence
	err   error
}

func (h *Host) Start(ctx context.Context, env *Env) (Recorder, error) {
	r := &hostRecorder{env: env, place: placeTracker{where: h.Where}}
	if h.Pod == "" {
		if err := r.read(ctx); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *hostRecorder) read(ctx context.Context) error {
	if r.ev != nil {
		return nil
	}
	node, _, ok, err := r.place.place(ctx, r.env)
	if err != nil || !ok {
		return err
	}
	const script = `echo "V $(stat -fc %T /sys/fs/cgroup)"
echo "A $(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)"
if [ -d /sys/fs/selinux ] && [ -e /sys/fs/selinux/enforce ]; then echo "S $(cat /sys/fs/selinux/enforce)"; fi
echo "K $(uname -r)"
echo "O $(. /etc/os-release 2>/dev/null; echo "$PRETTY_NAME")"`
	out, err := r.env.onNode(ctx, node, "sh", "-c", script)
	if err != nil {
		return fmt.Errorf("read the host facts of node %s: %w", node, err)
	}
	ev := &HostEvidence{Node: node, CgroupVersion: 1}
	for _, line := range strings.Split(string(out), "\n") {
		tag, v, _ := strings.Cut(line, " ")
		v = strings.TrimSpace(v)
		switch tag {
		case "V":
			if v == "cgroup2fs" {
				ev.CgroupVersion = 2
			}
		case "A":
			ev.AppArmor = v == "Y"
		case "S":
			ev.SELinux, ev.SELinuxEnforcing = true, v == "1"
		case "K":
			ev.Kernel = v
		case "O":
			ev.OS = v
		}
	}
	r.ev = ev
	return nil
}

func (r *hostRecorder) AfterStep(ctx context.Context, _ string) {
	if r.err == nil {
		r.err = r.read(ctx)
	}
}

// WaitField waits until the node is known (a Pod's, once it is bound),
// then holds the fact to the condition at once: facts of a host do not
// change while a probe runs, so a fact that does not hold fails the step.
func (r *hostRecorder) WaitField(ctx context.Context, timeout time.Duration, what, field string, holds func(any) bool) error {
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		return r.ev != nil, r.read(ctx)
	})
	if err != nil {
		return fmt.Errorf("%s: the node was not known within %s (Pod %s on no node): %w", what, timeout, r.place.where.Pod, err)
	}
	v := jsonValue(*r.ev).(map[string]any)[field]
	if !holds(v) {
		return fmt.Errorf("%s: node %s has %s = %v", what, r.ev.Node, field, v)
	}
	return nil
}

func (r *hostRecorder) WaitDeleted(context.Context, time.Duration, string) error {
	return fmt.Errorf("a host observer waits on a fact, not deleted")
}

func (r *hostRecorder) Evidence() (any, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.ev == nil {
		return nil, fmt.Errorf("never read: Pod %s was on no node after any step", r.place.where.Pod)
	}
	return *r.ev, nil
}

func (r *hostRecorder) Stop() {}
