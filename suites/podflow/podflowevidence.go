package podflow

import "github.com/kubeproof/kubeproof/framework"

// Evidence: what the specs of podflow.go record, under the names the claims files use.

// What kubectl apply -f pod.yaml did.
type applyEvidence struct {
	// ExitCode is kubectl apply's exit code.
	ExitCode int `json:"exitCode"`
	// Stdout is what it printed, trimmed.
	Stdout string `json:"stdout"`
	// Ms is how long it took.
	Ms float64 `json:"ms"`
}

// The Pod's first stored state.
type storedEvidence struct {
	// Phase is status.phase in the watch's first event of the Pod (an Added).
	Phase string `json:"phase"`
	// NodeName is spec.nodeName then ("" before binding).
	NodeName string `json:"nodeName"`
	// HasUID, HasResourceVersion and HasCreationTimestamp: the stored Pod has
	// each set.
	HasUID               bool `json:"hasUID"`
	HasResourceVersion   bool `json:"hasResourceVersion"`
	HasCreationTimestamp bool `json:"hasCreationTimestamp"`
}

// Whether the Pod was bound within the window, and to what.
type boundEvidence struct {
	// Bound: the Pod had a nodeName within WindowSeconds (Timeout.Bind).
	Bound         bool    `json:"bound"`
	WindowSeconds float64 `json:"windowSeconds"`
	// NodeExists: a Node of that name exists.
	NodeExists bool `json:"nodeExists"`
	// PodScheduled is the status of the Pod's PodScheduled condition when the
	// wait ended ("" without it).
	PodScheduled string `json:"podScheduled"`
	// LastSeen describes the last state of the Pod the watch saw.
	LastSeen string `json:"lastSeen"`
}

// Whether its container ran within the window, and how.
type runningEvidence struct {
	// Running: the Pod was Running with its container running within
	// Timeout.PodStart.
	Running bool `json:"running"`
	// Phase is its status.phase when the wait ended.
	Phase string `json:"phase"`
	// Runtime is the container runtime, from the scheme of the container ID
	// (e.g. containerd).
	Runtime string `json:"runtime"`
	// ContainerRunning: the container's state is running.
	ContainerRunning bool `json:"containerRunning"`
	// RestartCount is the container's restartCount then.
	RestartCount int32 `json:"restartCount"`
	// HasPodIP: the Pod has a podIP then.
	HasPodIP bool `json:"hasPodIP"`
	// StartedAtSet: the running state has a startedAt.
	StartedAtSet bool `json:"startedAtSet"`
	// LastSeen describes the last state of the Pod the watch saw.
	LastSeen string `json:"lastSeen"`
}

// The Pod once Ready: its true conditions and its container's status.
type readyEvidence struct {
	// Ready: the Pod's Ready condition is True.
	Ready bool `json:"ready"`
	// ConditionsTrue are the types of its conditions that are True, in status
	// order.
	ConditionsTrue []string `json:"conditionsTrue"`
	// Phase is its status.phase.
	Phase string `json:"phase"`
	// ContainerReady: its container's status says ready.
	ContainerReady bool `json:"containerReady"`
	// RestartCount is its container's restartCount.
	RestartCount int32 `json:"restartCount"`
}

// The order the watch saw the Pod's states in.
type orderEvidence struct {
	// StoredBeforeBound, BoundBeforeRunning and RunningBeforeReady: the watch
	// delivered the first state before the second (Running and Ready may be
	// one event).
	StoredBeforeBound  bool `json:"storedBeforeBound"`
	BoundBeforeRunning bool `json:"boundBeforeRunning"`
	RunningBeforeReady bool `json:"runningBeforeReady"`
}

// The Pod's row in `kubectl get pods` (empty when there was none).
type kubectlGetEvidence struct {
	// Ready, Status and Restarts are the READY, STATUS and RESTARTS columns
	// of the Pod's row.
	Ready    string `json:"ready"`
	Status   string `json:"status"`
	Restarts string `json:"restarts"`
	// Output is kubectl's whole output when it had no row for the Pod.
	Output string `json:"output"`
}

// The Pod's events, in the order received.
type eventsEvidence struct {
	// Reasons are the reasons of the Pod's events, in the order received.
	Reasons []string `json:"reasons"`
	// ScheduledMessage is the Scheduled event's message, node and name
	// generalized ({node}, {name}).
	ScheduledMessage string `json:"scheduledMessage"`
	// InOrder: Scheduled, Created, Started appear in this order among the
	// reasons.
	InOrder bool `json:"inOrder"`
	// WithImageInOrder: Scheduled, Pulled (the image's event, downloaded
	// or already present), Created, Started, in this order.
	WithImageInOrder bool `json:"withImageInOrder"`
}

// How often a Ready Pod's status was written in an observation window.
type statusWindowEvidence struct {
	// WindowSeconds is how long the Ready Pod and its node's Lease were
	// watched.
	WindowSeconds float64 `json:"windowSeconds"`
	// PodUpdates is how many watch events of the Pod arrived in the window.
	PodUpdates int `json:"podUpdates"`
	// NodeLeaseRenewals is how many watch events of the node's Lease arrived
	// in it.
	NodeLeaseRenewals int `json:"nodeLeaseRenewals"`
}

// What kubectl delete did to the Pod.
type deletedEvidence struct {
	// DeletionEventSeen: the Pod watch delivered a Deleted event within
	// Timeout.API after kubectl delete.
	DeletionEventSeen bool `json:"deletionEventSeen"`
	// GracefulMark: the deleted object had a deletionTimestamp.
	GracefulMark bool `json:"gracefulMark"`
	// RunningWhenRemoved counts the containers still running in the last
	// state the watch saw before the object went (unset if it saw none).
	RunningWhenRemoved *int `json:"runningWhenRemoved,omitempty"`
	// NotFoundAfter: a GET of the Pod then answered NotFound.
	NotFoundAfter bool `json:"notFoundAfter"`
	// DeleteToRemovedMs is the time from running kubectl delete to the
	// Deleted event.
	DeleteToRemovedMs float64 `json:"deleteToRemovedMs"`
	// LastStateBeforeRemove describes the Pod in the Deleted event.
	LastStateBeforeRemove string `json:"lastStateBeforeRemove"`
}

// The same manifest applied again.
type reappliedEvidence struct {
	// Ready: a Pod with another UID was Ready within Timeout.PodStart of
	// applying the manifest again.
	Ready bool `json:"ready"`
	// NewObject: that Pod's UID differs from the deleted one's.
	NewObject bool `json:"newObject"`
	// ApplyToReadyMs is the time from the apply to that Pod seen Ready.
	ApplyToReadyMs float64 `json:"applyToReadyMs"`
	// LastSeen describes the last state of the Pod the watch saw.
	LastSeen string `json:"lastSeen"`
}

var (
	applied      = framework.DeclareEvidence[applyEvidence]("apply", specCreate, specStatusWindow, specDelete)
	stored       = framework.DeclareEvidence[storedEvidence]("stored", specCreate)
	bound        = framework.DeclareEvidence[boundEvidence]("bound", specCreate)
	running      = framework.DeclareEvidence[runningEvidence]("running", specCreate)
	ready        = framework.DeclareEvidence[readyEvidence]("ready", specCreate)
	order        = framework.DeclareEvidence[orderEvidence]("order", specCreate)
	kubectlGet   = framework.DeclareEvidence[kubectlGetEvidence]("kubectlGet", specCreate)
	events       = framework.DeclareEvidence[eventsEvidence]("events", specCreate)
	statusWindow = framework.DeclareEvidence[statusWindowEvidence]("statusWindow", specStatusWindow)
	deleted      = framework.DeclareEvidence[deletedEvidence]("deleted", specDelete)
	reapplied    = framework.DeclareEvidence[reappliedEvidence]("reapplied", specDelete)
)
