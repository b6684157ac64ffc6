package admission

import "github.com/kubeproof/kubeproof/framework"

// Evidence: what the specs of webhooks.go record, under the names the claims files use.

// The Pod kubectl sent and the Pod the API server stored.
type storedEvidence struct {
	// SentContainers: the names of the containers in the Pod kubectl sent.
	SentContainers []string `json:"sentContainers"`
	// Containers: the names of the stored Pod's containers.
	Containers []string `json:"containers"`
	// InitContainers: the names of the stored Pod's init containers.
	InitContainers []string `json:"initContainers"`
	// DefaultedLabel: the value of the label the defaulting webhook sets,
	// on the stored Pod ("" if absent).
	DefaultedLabel string `json:"defaultedLabel"`
}

// What the validating recorder received for the Pod.
type validatingSawEvidence struct {
	// Called: the validating recorder webhook received the Pod.
	Called bool `json:"called"`
	// Containers and InitContainers are the container names of the Pod it
	// first received.
	Containers     []string `json:"containers"`
	InitContainers []string `json:"initContainers"`
}

// The stored Pod once Ready: how many of its containers are ready.
type runningEvidence struct {
	// Containers is how many containers the Ready Pod's spec has.
	Containers int `json:"containers"`
	// ReadyContainers is how many of their statuses say ready.
	ReadyContainers int `json:"readyContainers"`
	// InitDone is how many init containers terminated with exit code 0.
	InitDone int `json:"initDone"`
}

// A Pod sent without containers, to a chain whose mutating webhook fills
// them in.
type fillEvidence struct {
	// Code is the status code of the create of a Pod without containers.
	Code int `json:"code"`
	// Message is the answer's Status message.
	Message string `json:"message"`
	// StoredContainers are the container names of the Pod the answer returned
	// (as stored).
	StoredContainers []string `json:"storedContainers"`
}

// What the validating recorder received for the Pod sent without containers.
type validatingSawFilledEvidence struct {
	// Calls is how many calls of the validating recorder concerned that Pod.
	Calls int `json:"calls"`
	// Containers are the container names in the first of them.
	Containers []string `json:"containers"`
}

// A Pod a validating webhook denies.
type deniedEvidence struct {
	// Code is the status code of the create of a Pod without limits.
	Code int `json:"code"`
	// Message is the answer's Status message.
	Message string `json:"message"`
	// StoredAfter: the Pod existed afterwards.
	StoredAfter bool `json:"storedAfter"`
}

// A validating webhook that answers with a patch: what became of it.
type validatingPatchEvidence struct {
	// Outcome: "refused" (the API server rejects a validating webhook's
	// response that carries a patch), "admitted-without-patch" or
	// "admitted-with-patch".
	Outcome string `json:"outcome"`
	// Code and Message are the status code and first line of the Status
	// message of the create.
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Two slow mutating webhooks: one after the other, or at the same time?
type mutatingEvidence struct {
	// CalledBoth: both slow mutating webhooks received the Pod.
	CalledBoth bool `json:"calledBoth"`
	// Sequential: the second call arrived no earlier than the first was
	// answered.
	Sequential bool `json:"sequential"`
	// GapMs is the time from the first answer to the second call's arrival
	// (negative when they overlapped).
	GapMs float64 `json:"gapMs"`
}

// Two slow validating webhooks.
type validatingEvidence struct {
	// CalledBoth: both slow validating webhooks received the Pod.
	CalledBoth bool `json:"calledBoth"`
	// Parallel: their calls overlapped in time; OverlapMs is by how much.
	Parallel  bool    `json:"parallel"`
	OverlapMs float64 `json:"overlapMs"`
	// AfterMutation: both arrived no earlier than the last mutating call was
	// answered.
	AfterMutation bool `json:"afterMutation"`
}

// The create that passed the two slow mutating and two slow validating
// webhooks.
type requestEvidence struct {
	// Code is the status code of the create that passed the slow webhooks.
	Code int `json:"code"`
	// Ms is how long that create took.
	Ms float64 `json:"ms"`
}

// Two mutating webhooks that label the Pod, the first with
// reinvocationPolicy IfNeeded.
type reinvocationEvidence struct {
	// CallsToFirst and CallsToSecond are how many calls the first webhook
	// (reinvocationPolicy IfNeeded) and the second received for the Pod.
	CallsToFirst  int `json:"callsToFirst"`
	CallsToSecond int `json:"callsToSecond"`
}

// One webhook that cannot answer, under one failurePolicy.
type failureCase struct {
	// Code is the status code of the create.
	Code int `json:"code"`
	// Message is the first line of the answer's Status message, generalized.
	Message string `json:"message"`
	// Stored: the Pod existed afterwards.
	Stored bool `json:"stored"`
	// Ms is how long the create took.
	Ms float64 `json:"ms"`
	// Rejected: the request was refused because the webhook could not
	// answer (the API server says it failed calling it).
	Rejected bool `json:"rejected"`
}

// A webhook that cannot answer, under each failurePolicy.
type failurePolicyEvidence struct {
	// UnreachableFail and UnreachableIgnore: a webhook behind a Service
	// without endpoints, with failurePolicy Fail and Ignore.
	UnreachableFail   failureCase `json:"unreachable-fail"`
	UnreachableIgnore failureCase `json:"unreachable-ignore"`
	// SlowFail and SlowIgnore: a webhook that answers after 4 s with
	// timeoutSeconds 1, with failurePolicy Fail and Ignore.
	SlowFail   failureCase `json:"slow-fail"`
	SlowIgnore failureCase `json:"slow-ignore"`
}

var (
	stored            = framework.DeclareEvidence[storedEvidence]("stored", specSidecar)
	validatingSaw     = framework.DeclareEvidence[validatingSawEvidence]("validatingSaw", specSidecar)
	running           = framework.DeclareEvidence[runningEvidence]("running", specSidecar)
	fill              = framework.DeclareEvidence[fillEvidence]("fill", specOrder)
	validatingSawFill = framework.DeclareEvidence[validatingSawFilledEvidence]("validatingSawFilled", specOrder)
	denied            = framework.DeclareEvidence[deniedEvidence]("denied", specOrder)
	validatingPatch   = framework.DeclareEvidence[validatingPatchEvidence]("validatingPatch", specOrder)
	mutatingCalls     = framework.DeclareEvidence[mutatingEvidence]("mutating", specConcurrency)
	validatingCalls   = framework.DeclareEvidence[validatingEvidence]("validating", specConcurrency)
	concurrentRequest = framework.DeclareEvidence[requestEvidence]("request", specConcurrency)
	reinvocation      = framework.DeclareEvidence[reinvocationEvidence]("reinvocation", specConcurrency)
	failurePolicySeen = framework.DeclareEvidence[failurePolicyEvidence]("failurePolicy", specFailure)
)
