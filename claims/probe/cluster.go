package probe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kubeproof/kubeproof/contract/cluster"
)

// Scope is what a probe changes: its own namespace, or the whole cluster.
type Scope string

const (
	// ScopeNamespace: the probe makes objects in its own namespace only
	// (the default).
	ScopeNamespace Scope = "namespace"
	// ScopeCluster: the probe makes cluster-scoped objects (Nodes,
	// classes, webhooks), restarts or adds components: it runs alone, its
	// cleanup removes what it made and puts components back, and it runs
	// only on a cluster nobody else uses (Disposable: one kubeproof made,
	// or one its user passed --disposable for).
	ScopeCluster Scope = "cluster"
)

// ComponentRestart restarts a component of the cluster with other flags,
// feature gates or configuration, where the provider can (local, kind);
// the probe puts it back as it was when it ends, also when a step failed,
// or at a restoreComponent step.
type ComponentRestart struct {
	// Component is kube-apiserver, kube-controller-manager,
	// kube-scheduler, kubelet, kube-proxy or containerd.
	Component string `json:"component"`
	// Args are flags added to its command line (one that it has is
	// replaced): ["--terminated-pod-gc-threshold=1"].
	Args []string `json:"args,omitempty"`
	// FeatureGates are set on top of its own: {ContainerRestartRules: false}.
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
	// Config is a JSON merge patch of its configuration file (the kubelet's
	// KubeletConfiguration, kube-proxy's KubeProxyConfiguration):
	// {crashLoopBackOff: {maxContainerRestartPeriod: 2s}}.
	Config map[string]any `json:"config,omitempty"`
	// Node restarts a node agent (kubelet, kube-proxy, containerd) on one
	// node only; Pod on the node a Pod of the probe runs on. Neither: on
	// every node.
	Node string `json:"node,omitempty"`
	Pod  string `json:"pod,omitempty"`
}

// ExtraComponent is another instance of a component run beside the
// cluster's own until the probe ends.
type ExtraComponent struct {
	// Component is kube-scheduler: a second scheduler, whose one profile
	// is Name, so that it places the Pods whose spec.schedulerName is Name.
	Component string `json:"component"`
	// Name is its name (the scheduler's schedulerName).
	Name string `json:"name"`
	// Args are more flags for it.
	Args []string `json:"args,omitempty"`
}

// Signal sends a signal to a container of a Pod, or to its sandbox,
// through the node's container runtime: not through the API server or the
// kubelet, as a crash or the kernel's OOM killer would.
type Signal struct {
	// Pod is a Pod of the probe.
	Pod string `json:"pod"`
	// Container is the container (default: the first); Sandbox sends it to
	// the Pod's sandbox (its pause process) instead.
	Container string `json:"container,omitempty"`
	Sandbox   bool   `json:"sandbox,omitempty"`
	// Signal is KILL (default), TERM, INT, HUP, USR1 or USR2.
	Signal string `json:"signal,omitempty"`
}

// Signals are the signals a signal step sends.
var Signals = []string{"KILL", "TERM", "INT", "HUP", "USR1", "USR2"}

// ExtraComponents are the components an addComponent step runs a second
// instance of.
var ExtraComponents = []string{"kube-scheduler"}

var schedulerNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// ChangesCluster says whether the probe changes more than its namespace:
// it stops, restarts or adds a component, or its manifests make
// cluster-scoped objects.
func (p LoadedProbe) ChangesCluster() []string {
	var what []string
	for i, s := range p.Steps {
		name := p.StepNames()[i]
		switch {
		case s.StopComponent != "":
			what = append(what, fmt.Sprintf("step %s stops %s", name, s.StopComponent))
		case s.RestartComponent != nil:
			what = append(what, fmt.Sprintf("step %s restarts %s", name, s.RestartComponent.Component))
		case s.AddComponent != nil:
			what = append(what, fmt.Sprintf("step %s adds a %s", name, s.AddComponent.Component))
		case s.Apply != nil:
			data, err := p.Manifest(*s.Apply)
			if err != nil {
				continue
			}
			for _, k := range clusterScopedKinds(data) {
				what = append(what, fmt.Sprintf("step %s makes a %s, which is cluster-scoped", name, k))
			}
		}
	}
	return what
}

// RunsAlone says whether the probe must run with no other spec beside it
// (Serial): it stops a component, or it changes the cluster.
func (p Probe) RunsAlone() bool {
	return p.StopsComponents() || p.Scope == ScopeCluster
}

// ClusterScopedKinds are the kinds of built-in objects that belong to no
// namespace, which a probe of scope namespace may not make: lint finds
// them in its manifests (the probe also refuses any other cluster-scoped
// object when it runs, by what the API server says of its kind).
var ClusterScopedKinds = []string{
	"Node", "Namespace", "PersistentVolume", "StorageClass", "CSIDriver", "CSINode", "VolumeAttachment",
	"RuntimeClass", "PriorityClass", "IngressClass", "ClusterRole", "ClusterRoleBinding",
	"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "ValidatingAdmissionPolicy",
	"ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding",
	"CustomResourceDefinition", "APIService", "CertificateSigningRequest", "FlowSchema",
	"PriorityLevelConfiguration", "DeviceClass", "ResourceSlice",
}

// clusterScopedKinds lists the cluster-scoped kinds a manifest makes.
func clusterScopedKinds(data []byte) []string {
	var out []string
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var obj struct {
			Kind string `json:"kind"`
		}
		if err := dec.Decode(&obj); err != nil {
			if !errors.Is(err, io.EOF) {
				return out // the apply step says what is wrong with it
			}
			return out
		}
		if slices.Contains(ClusterScopedKinds, obj.Kind) {
			out = append(out, obj.Kind)
		}
	}
}

// ValidateCluster checks a probe's scope and the steps that change the
// cluster or reach its nodes (its manifests read from their files).
func (p LoadedProbe) ValidateCluster() []string {
	var errs []string
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Sprintf("probe %s: %s", p.ID, fmt.Sprintf(format, args...)))
	}
	if !slices.Contains([]Scope{"", ScopeNamespace, ScopeCluster}, p.Scope) {
		bad("scope %q is not namespace or cluster", p.Scope)
	}
	if p.Scope != ScopeCluster {
		for _, w := range p.ChangesCluster() {
			bad("%s: declare scope: cluster (the probe then runs alone, and only on a cluster nobody else uses)", w)
		}
	}
	for i, s := range p.Steps {
		name := p.StepNames()[i]
		if r := s.RestartComponent; r != nil {
			if !slices.Contains(cluster.RestartableComponents, r.Component) {
				bad("step %s: restartComponent: %q is not a component a provider restarts (%s)", name, r.Component, strings.Join(cluster.RestartableComponents, ", "))
			}
			if r.Node != "" && r.Pod != "" {
				bad("step %s: restartComponent: give node or pod, not both", name)
			}
		}
		if c := s.RestoreComponent; c != "" && !slices.ContainsFunc(p.Steps[:i], func(b Step) bool { return b.RestartComponent != nil && b.RestartComponent.Component == c }) {
			bad("step %s: restores %s, which no step before it restarts", name, c)
		}
		if a := s.AddComponent; a != nil {
			if !slices.Contains(ExtraComponents, a.Component) {
				bad("step %s: addComponent: %q is not a component a probe adds (%s)", name, a.Component, strings.Join(ExtraComponents, ", "))
			}
			if !schedulerNameRE.MatchString(a.Name) || a.Name == "default-scheduler" {
				bad("step %s: addComponent: name %q must be lower-case letters, digits and dashes, and not default-scheduler", name, a.Name)
			}
		}
		if sg := s.Signal; sg != nil {
			if sg.Pod == "" || (sg.Sandbox && sg.Container != "") {
				bad("step %s: signal needs a pod, and a container or sandbox: true (not both)", name)
			}
			if sg.Signal != "" && !slices.Contains(Signals, sg.Signal) {
				bad("step %s: signal %q is not one of %s", name, sg.Signal, strings.Join(Signals, ", "))
			}
		}
	}
	return errs
}
