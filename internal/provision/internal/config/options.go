// Package config is what a cluster is made with: the shape every provider
// that makes clusters is given, and the options of each provider. The
// provisioning face (internal/provision) names these types for its callers;
// the providers behind it read them.
package config

import "github.com/kubeproof/kubeproof/internal/progress"

// Options are what a provider is made with. Every provider reads
// Progress, and Shape if it makes clusters; each of the others belongs to
// one provider: Existing to kubeconfig, Local to local, Kind to kind.
type Options struct {
	Shape    Shape
	Progress *progress.Printer
	Existing Existing
	Local    Local
	Kind     Kind
}

// Existing are the options of a cluster that exists (the kubeconfig
// provider).
type Existing struct {
	// Kubeconfig and Context name the cluster; an empty Kubeconfig means
	// kubectl's rules ($KUBECONFIG, then ~/.kube/config).
	Kubeconfig string
	Context    string
	// Disposable: the cluster is used by nobody else, so specs that
	// disturb other users may run.
	Disposable bool
	// Published is where the nodes pull kubeproof's images from when the
	// run pushes none there (no --image-registry): the registry path a
	// release published them to, tagged with its version.
	Published Published
	// InCluster, when set, says that kubeproof runs in a Pod of the
	// cluster, started by a run outside it (run --in-cluster).
	InCluster *InCluster
}

// InCluster is what a run outside the cluster knew of it that holds
// inside too, for the run it started in a Pod there.
type InCluster struct {
	// Provider is the outer run's provider.
	Provider string
	// LoadedImages: the nodes have kubeproof's images loaded (the outer
	// run's cluster had LoadImage).
	LoadedImages bool
}

// Published names a registry path holding kubeproof's published images
// (host[:port][/path]) and where that name came from.
type Published struct {
	Registry string
	// From says who named it: $KUBEPROOF_IMAGE_REGISTRY, or the release.
	From string
}

// Local are the options of the local provider's clusters.
type Local struct {
	// APIServerPort is the API server's port on this machine.
	APIServerPort int
	// EtcdMembers is how many members etcd has.
	EtcdMembers int
	// AdmissionConfig is the API server's admission configuration, an
	// AdmissionConfiguration (the provider keeps its own copy).
	AdmissionConfig []byte
}

// DefaultWorkers is the kind provider's default shape: one control plane
// and two workers, so that scheduling has real nodes to choose from.
const DefaultWorkers = 2

// Kind are the options of the kind provider's clusters.
type Kind struct {
	// Workers are the nodes besides the control plane.
	Workers int
	// NodeImage is a node image to use instead of kubeproof's own.
	NodeImage string
	// DebianMirror is where kubeproof's node image gets its Debian root
	// filesystem; empty: the machine's apt sources decide (Debian
	// bookworm, or an Ubuntu machine's own release).
	DebianMirror string
}
