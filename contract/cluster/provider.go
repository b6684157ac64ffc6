package cluster

import "context"

// Provider brings one cluster up and down.
type Provider interface {
	// Name is the provider's name, as registered.
	Name() string
	// Up makes the cluster (or checks that it is reachable) and returns its
	// info. On failure it leaves nothing behind.
	Up(ctx context.Context) (*Info, error)
	// Down removes everything Up made. It succeeds when there is nothing to
	// remove, and cleans up after a crashed or interrupted Up.
	Down(ctx context.Context) error
	// Info returns the info of a cluster that is up, or an error that says
	// it is not.
	Info(ctx context.Context) (*Info, error)
	// Status describes the cluster's parts for humans.
	Status(ctx context.Context) (Status, error)
}

// Status is a human-oriented snapshot of a cluster.
type Status struct {
	Up    bool
	Lines []StatusLine
}

// StatusLine is one part of a cluster and its state.
type StatusLine struct {
	Part   string
	State  string
	Detail string
}

// InfoFiler is a provider that keeps its cluster's Info in a file, for the
// spec runner, which reads it from there.
type InfoFiler interface {
	InfoFile() string
}

// LogExporter is a provider that can copy its components' logs somewhere,
// for a report after a failure.
type LogExporter interface {
	ExportLogs(ctx context.Context, dir string) error
}

// APIServerStarter is a provider that can start an extra API server against
// the cluster's own etcd, with other flags: checks use it to compare a
// cluster configured one way with the same cluster configured another.
type APIServerStarter interface {
	StartAPIServer(ctx context.Context, extraArgs []string) (*APIServer, error)
}

// ComponentStopper is a provider that can stop a component of its cluster
// (the controller manager, the scheduler, etcd) and start it again as it
// was: checks use it to see what the cluster does while the component is
// gone, and how the component catches up when it is back.
type ComponentStopper interface {
	// StopComponent stops the component and returns what starts it again
	// and waits until it is healthy.
	StopComponent(ctx context.Context, name string) (start func(context.Context) error, err error)
}

// APIServer is an extra API server a provider started.
type APIServer struct {
	// URL is its address (https://host:port).
	URL string
	// CAFile verifies its serving certificate.
	CAFile string
	// AuditLogPath is its own audit log.
	AuditLogPath string
	// Stop stops it and waits until it is gone.
	Stop func() error
}

// Abandoner is a provider that can tell whether its cluster was left by a
// kubeproof command that was killed (SIGKILL) before it could remove it:
// an ephemeral cluster whose maker is gone, or one whose bring-up was cut
// short. who names the command that made it.
type Abandoner interface {
	Abandoned() (who string, abandoned bool)
}

// Lister is a provider that can name the clusters it made on this machine,
// including ones whose maker was killed: `kubeproof down --all` removes them.
type Lister interface {
	Clusters() ([]string, error)
}

// ComponentRestarter is a provider that can restart a component of its
// cluster with other flags, feature gates or configuration, and put it
// back as it was: checks use it for what a document says a setting does.
type ComponentRestarter interface {
	// RestartComponent restarts the component (on every node that runs
	// it, or on change.Node) with change, waits until it is healthy again,
	// and returns what restarts it as it was (and waits for that too).
	RestartComponent(ctx context.Context, name string, change ComponentChange) (restore func(context.Context) error, err error)
}

// RestartableComponents are the components a ComponentRestarter may be
// asked for; a provider says which of them it restarts in its error.
var RestartableComponents = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy", "containerd"}

// ComponentChange is how a component is restarted.
type ComponentChange struct {
	// Args are flags added to the component's command line; a flag it
	// already has is replaced (every occurrence).
	Args []string `json:"args,omitempty"`
	// FeatureGates are set on top of the component's own
	// (--feature-gates, or its configuration's featureGates).
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
	// Config is a JSON merge patch of the component's configuration file
	// (the kubelet's KubeletConfiguration, kube-proxy's
	// KubeProxyConfiguration).
	Config map[string]any `json:"config,omitempty"`
	// Node restricts a node agent's restart (kubelet, kube-proxy,
	// containerd) to one node; empty means every node.
	Node string `json:"node,omitempty"`
}

// ExtraComponentStarter is a provider that can run another instance of a
// component beside the cluster's own (a second scheduler with a name of
// its own), for as long as a check needs it.
type ExtraComponentStarter interface {
	// StartExtraComponent starts component (kube-scheduler) under name
	// with args added, waits until it is healthy, and returns what stops
	// it.
	StartExtraComponent(ctx context.Context, component, name string, args []string) (stop func() error, err error)
}

// ImageLoader is a provider that can put an image into every node of its
// cluster from a docker archive, as it puts kubeproof's images there when
// it makes the cluster: a run inside the cluster (run --in-cluster) gets
// kubeproof's own image so, without a registry.
type ImageLoader interface {
	LoadImageArchive(ctx context.Context, archive string) error
}
