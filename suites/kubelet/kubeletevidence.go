package kubelet

import "github.com/kubeproof/kubeproof/framework"

// Evidence: what the specs of kubelet.go record, under the names the claims files use.

// An unbound Pod over an observation window, beside a bound one that shows
// the kubelet at work.
type unboundEvidence struct {
	// WindowSeconds is how long the unbound Pod was watched after the
	// scheduler gave up.
	WindowSeconds float64 `json:"windowSeconds"`
	// ControlStarted: the control Pod, bound by its creator, ran (the spec
	// stops otherwise).
	ControlStarted bool `json:"controlStarted"`
	// SchedulerGaveUp: the unbound Pod got PodScheduled False within
	// Timeout.Bind.
	SchedulerGaveUp bool `json:"schedulerGaveUp"`
	// Bound: the unbound Pod had a nodeName at the window's end.
	Bound bool `json:"bound"`
	// ContainerEvents is how many Pulling, Pulled, Created and Started events
	// the unbound Pod got.
	ContainerEvents int `json:"containerEvents"`
	// ContainerStatuses is how many container statuses it had at the window's
	// end.
	ContainerStatuses int `json:"containerStatuses"`
	// Reasons are the reasons of its events, in order.
	Reasons []string `json:"reasons"`
}

// Two containers of one Pod, and the runtime's view of it.
type sandboxEvidence struct {
	// LocalhostWorks: each container reached the other on localhost.
	LocalhostWorks bool `json:"localhostWorks"`
	// SameInterfaces: both containers see the same network interfaces and
	// addresses.
	SameInterfaces bool `json:"sameInterfaces"`
	// PodIPOnInterfaces: the Pod's IP is on those interfaces.
	PodIPOnInterfaces bool `json:"podIPOnInterfaces"`
	// RuntimeOrder is the runtime's containers of the Pod in creation order
	// ("sandbox", "container:<name>"); absent when the runtime could not be
	// asked.
	RuntimeOrder []string `json:"runtimeOrder,omitempty"`
	// SandboxFirst: the runtime's first container of the Pod is its sandbox;
	// absent when the runtime could not be asked.
	SandboxFirst *bool `json:"sandboxFirst,omitempty"`
	// RuntimeNote is why the runtime could not be asked, if it could not.
	RuntimeNote string `json:"runtimeNote,omitempty"`
}

// A Pod whose ConfigMap volume could not be mounted (the ConfigMap did not
// exist yet): what the node had made of it meanwhile, and whether it ran
// once the ConfigMap was there.
type volumeGateEvidence struct {
	// FailedMount: the kubelet reported FailedMount for the missing ConfigMap
	// within Timeout.PodStart.
	FailedMount bool `json:"failedMount"`
	// While the kubelet reported FailedMount: the Pod's IP, its
	// PodReadyToStartContainers condition (True once the sandbox and its
	// network are up), and whether the runtime had any container of it.
	PodIPWhileWaiting string `json:"podIPWhileWaiting"`
	// SandboxReadyWhileWaiting is the status of the PodReadyToStartContainers
	// condition then ("" without it).
	SandboxReadyWhileWaiting string `json:"sandboxReadyWhileWaiting"`
	// RuntimeSandboxWhileWaiting: the runtime had a container of the Pod
	// then; absent when the runtime could not be asked.
	RuntimeSandboxWhileWaiting *bool `json:"runtimeSandboxWhileWaiting,omitempty"`
	// NetworkWhileVolumeMissing: any of those shows a sandbox or network.
	NetworkWhileVolumeMissing bool `json:"networkWhileVolumeMissing"`
	// RanOnceMounted: the Pod was Running within Timeout.PodStart once the
	// ConfigMap was created.
	RanOnceMounted bool `json:"ranOnceMounted"`
}

// The imagePullPolicy the API server gave each form of image reference.
type pullPolicyEvidence struct {
	// Latest, NoTag, FixedTag and Digest are the imagePullPolicy a dry-run
	// create defaulted for an image with the tag latest, no tag, a fixed tag
	// and a digest.
	Latest   string `json:"latest"`
	NoTag    string `json:"noTag"`
	FixedTag string `json:"fixedTag"`
	Digest   string `json:"digest"`
}

// An image on the node with IfNotPresent, and one that is nowhere.
type imagesEvidence struct {
	// LocalPulledMessage is the message of the Pulled event of the
	// IfNotPresent Pod whose image is on its node.
	LocalPulledMessage string `json:"localPulledMessage"`
	// LocalAlreadyPresent: that message says "already present on machine".
	LocalAlreadyPresent bool `json:"localAlreadyPresent"`
	// LocalPulling: that Pod got a Pulling event.
	LocalPulling bool `json:"localPulling"`
	// MissingFailed: the Pod of an image no registry has waited in
	// ErrImagePull or ImagePullBackOff within Timeout.PodStart.
	MissingFailed bool `json:"missingFailed"`
	// MissingReason is that waiting reason.
	MissingReason string `json:"missingReason"`
	// MissingEventType and MissingEventMessage are the type and first line of
	// its Failed event.
	MissingEventType    string `json:"missingEventType"`
	MissingEventMessage string `json:"missingEventMessage"`
}

// A Pod with imagePullPolicy Always whose image the node already has: did
// the kubelet go to the registry (a Pulling event), and how did it end
// ("pulled", with the pull's time; "failed" where no registry serves it).
type alwaysEvidence struct {
	// Pulling: the Always Pod got a Pulling event.
	Pulling bool `json:"pulling"`
	// PullTried: the kubelet had the runtime pull the image, as any of the
	// pull's events says: Pulling, a Pulled event that is not "already
	// present", or the pull's Failed event.
	PullTried bool `json:"pullTried"`
	// Outcome is "pulled" or "failed", after the Pulled or Failed event; ""
	// if neither came.
	Outcome string `json:"outcome"`
	// Message is that event's message (its first line for Failed).
	Message string `json:"message"`
	// PullMs is the pull's duration as the Pulled event states it.
	PullMs float64 `json:"pullMs"`
}

// The cgroup limits a container reads from inside.
type cgroupEvidence struct {
	// Version is the cgroup version the container sees ("v1" or "v2").
	Version string `json:"version"`
	// Files are the cgroup files the test app read inside the container, by
	// name, with their content.
	Files map[string]string `json:"files"`
	// MemoryLimitBytes is the memory limit read from them (memory.max on v2);
	// -1 when unreadable.
	MemoryLimitBytes float64 `json:"memoryLimitBytes"`
	// CPULimitCores is the CPU limit read from them (quota over period); -1
	// when unreadable or unlimited.
	CPULimitCores float64 `json:"cpuLimitCores"`
	// Error says why the app's output could not be read, if it could not.
	Error string `json:"error,omitempty"`
}

// A container whose startup takes startupDelaySeconds, behind a startupProbe.
type startupEvidence struct {
	// StartupDelaySeconds is how long the app takes to start (its
	// --startup-delay).
	StartupDelaySeconds float64 `json:"startupDelaySeconds"`
	// RunningToReadyMs is the time from the Pod seen Running to seen Ready.
	RunningToReadyMs float64 `json:"runningToReadyMs"`
	// StartedToReadyMs is the time from the container's startedAt to the Pod
	// seen Ready.
	StartedToReadyMs float64 `json:"startedToReadyMs"`
	// RestartsDuringStartup is the container's restartCount when the Pod was
	// Ready.
	RestartsDuringStartup int32 `json:"restartsDuringStartup"`
}

// The same container once its liveness endpoint fails.
type livenessEvidence struct {
	// Restarted: the container's restartCount reached 1 within WindowSeconds
	// of the app turning unhealthy.
	Restarted bool `json:"restarted"`
	// RestartCount is its restartCount when the wait ended.
	RestartCount int32 `json:"restartCount"`
	// RestartedAfterMs is the time from the switch to unhealthy to the
	// restart seen.
	RestartedAfterMs float64 `json:"restartedAfterMs"`
	// WindowSeconds is how long the restart was waited for
	// (Timeout.Controller).
	WindowSeconds float64 `json:"windowSeconds"`
}

var (
	unbound           = framework.DeclareEvidence[unboundEvidence]("unbound", specBoundOnly)
	sandbox           = framework.DeclareEvidence[sandboxEvidence]("sandbox", specSandbox)
	defaultPullPolicy = framework.DeclareEvidence[pullPolicyEvidence]("defaultPullPolicy", specImages)
	imagesSeen        = framework.DeclareEvidence[imagesEvidence]("images", specImages)
	alwaysPolicy      = framework.DeclareEvidence[alwaysEvidence]("alwaysPolicy", specImages)
	volumeGate        = framework.DeclareEvidence[volumeGateEvidence]("volumeGate", specSandbox)
	cgroup            = framework.DeclareEvidence[cgroupEvidence]("cgroup", specCgroups)
	startup           = framework.DeclareEvidence[startupEvidence]("startup", specProbes)
	liveness          = framework.DeclareEvidence[livenessEvidence]("liveness", specProbes)
)
