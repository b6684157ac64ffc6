package create

import "github.com/kubeproof/kubeproof/internal/progress"

// Options are what a provider is made with, once every Option is applied.
// Every provider reads Progress, and Shape if it makes clusters; each of
// the others belongs to one provider (see Registration.Reads).
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

// Option sets some of a provider's Options.
type Option func(*Options)

// WithShape is the shape of a cluster the provider makes.
func WithShape(s Shape) Option { return func(o *Options) { o.Shape = s } }

// WithProgress is where the provider tells how its work goes.
func WithProgress(p *progress.Printer) Option { return func(o *Options) { o.Progress = p } }

// WithExisting are the options of an existing cluster.
func WithExisting(e Existing) Option { return func(o *Options) { o.Existing = e } }

// WithLocal are the local provider's options.
func WithLocal(l Local) Option { return func(o *Options) { o.Local = l } }

// WithKind are the kind provider's options.
func WithKind(k Kind) Option { return func(o *Options) { o.Kind = k } }

// Knob is one option that only some providers read; a provider lists those
// it reads in its Registration, and whoever sets a knob for a provider
// that does not read it (the CLI, from a flag) refuses.
type Knob string

// The knobs of the providers' own options.
const (
	KnobKubeconfig      Knob = "kubeconfig"
	KnobContext         Knob = "context"
	KnobDisposable      Knob = "disposable"
	KnobAPIServerPort   Knob = "apiserver-port"
	KnobEtcdMembers     Knob = "etcd-members"
	KnobAdmissionConfig Knob = "admission-config"
	KnobWorkers         Knob = "workers"
	KnobNodeImage       Knob = "node-image"
	KnobDebianMirror    Knob = "debian-mirror"
)
