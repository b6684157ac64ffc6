package controllers

import "github.com/kubeproof/kubeproof/framework"

// Evidence: what the specs of lifecycle.go record, under the names the claims files use.

// Scaling up, as the watches saw it when the window ended.
type scaleUpEvidence struct {
	// Ready is how many Pods were Ready after scaling to 4 (at most
	// Timeout.PodStart).
	Ready int `json:"ready"`
	// ReplicaSet is the spec.replicas of the namespace's ReplicaSets, summed.
	ReplicaSet int32 `json:"replicaSet"`
}

// Scaling down.
type scaleDownEvidence struct {
	// Pods is how many Pods existed (not terminating) after scaling to 1.
	Pods int `json:"pods"`
	// ReplicaSet is the spec.replicas of the namespace's ReplicaSets, summed.
	ReplicaSet int32 `json:"replicaSet"`
}

// The last Pod deleted by hand.
type selfHealEvidence struct {
	// Recreated: a Pod other than the deleted one existed within
	// Timeout.PodStart.
	Recreated bool `json:"recreated"`
	// Ready is how many Pods were Ready then.
	Ready int `json:"ready"`
}

// A Deployment deleted with background propagation: what was left of its
// dependents when the window ended, and who deleted them.
type backgroundEvidence struct {
	// RSGone and PodsGone: none of the Deployment's ReplicaSets (Pods) was
	// left within Timeout.Controller.
	RSGone   bool `json:"rsGone"`
	PodsGone bool `json:"podsGone"`
	// ReplicaSetsRemaining and PodsRemaining are how many were left.
	ReplicaSetsRemaining int `json:"replicaSetsRemaining"`
	PodsRemaining        int `json:"podsRemaining"`
	// ReplicaSetsDeletedBy are the users whose ReplicaSet deletes the audit
	// log has; absent without the audit log.
	ReplicaSetsDeletedBy []string `json:"replicaSetsDeletedBy,omitempty"`
}

// A Deployment deleted with foreground propagation.
type foregroundEvidence struct {
	// MarkedWithFinalizer: the watch saw the Deployment with a
	// deletionTimestamp and the foregroundDeletion finalizer.
	MarkedWithFinalizer bool `json:"markedWithFinalizer"`
	// DeploymentGone: the Deployment was deleted within Timeout.Controller.
	DeploymentGone bool `json:"deploymentGone"`
	// OwnerGoneAfterDependents: its ReplicaSet's deletion was seen before its
	// own.
	OwnerGoneAfterDependents bool `json:"ownerGoneAfterDependents"`
}

// A Deployment deleted with propagationPolicy Orphan.
type orphanEvidence struct {
	// DeploymentGone: a GET of the Deployment answered NotFound.
	DeploymentGone bool `json:"deploymentGone"`
	// OwnerRefRemoved: its ReplicaSet lost its owner references within
	// Timeout.Controller.
	OwnerRefRemoved bool `json:"ownerRefRemoved"`
	// ReplicaSetsRemain and PodsRemain are how many of its ReplicaSets and
	// (not terminating) Pods existed then.
	ReplicaSetsRemain int `json:"replicaSetsRemain"`
	PodsRemain        int `json:"podsRemain"`
	// PodsStillOwnedByReplicaSet is how many of those Pods still had an owner
	// reference.
	PodsStillOwnedByReplicaSet int `json:"podsStillOwnedByReplicaSet"`
	// DependentsCleanedUp: no ReplicaSet nor Pod of it was left.
	DependentsCleanedUp bool `json:"dependentsCleanedUp"`
}

// A rolling update: the extremes maxSurge and maxUnavailable bound, and the
// ReplicaSets before and after.
type rolloutEvidence struct {
	// Completed: the rollout of the new template completed within
	// Timeout.Rollout.
	Completed bool `json:"completed"`
	// Replicas is the Deployment's replica count (3; maxSurge and
	// maxUnavailable are the defaults, 25%).
	Replicas int32 `json:"replicas"`
	// MaxDesired is the most Pods the ReplicaSets asked for together
	// (spec.replicas) during the rollout.
	MaxDesired int32 `json:"maxDesired"`
	// MaxPods is the most Pods that existed (not terminating) at once during
	// it.
	MaxPods int `json:"maxPods"`
	// MinAvailable is the fewest Pods the ReplicaSets reported available
	// together during it.
	MinAvailable int32 `json:"minAvailable"`
	// WithinBounds: MaxDesired stayed at most Replicas+1 and MinAvailable at
	// least Replicas.
	WithinBounds bool `json:"withinBounds"`
	// PodsWithinBounds: the Pods that existed (not terminating) never
	// outnumbered replicas + maxSurge.
	PodsWithinBounds bool `json:"podsWithinBounds"`
	// NewReplicaSet: the rollout made a ReplicaSet other than the first.
	NewReplicaSet bool `json:"newReplicaSet"`
	// OldScaledDown: the first ReplicaSet was scaled to 0.
	OldScaledDown bool `json:"oldScaledDown"`
	// OldRevision and NewRevision are the deployment.kubernetes.io/revision
	// annotations of the first and the new ReplicaSet.
	OldRevision string `json:"oldRevision"`
	NewRevision string `json:"newRevision"`
}

// The Deployment controller's writes to ReplicaSets during the rollout.
type reconcilesEvidence struct {
	// ReplicaSetUpdates is how many updates and patches of ReplicaSets the
	// Deployment controller sent during the rollout (audit log).
	ReplicaSetUpdates int `json:"replicaSetUpdates"`
}

// kubectl rollout undo after the rolling update.
type undoEvidence struct {
	// BackToFirstTemplate: after kubectl rollout undo the current ReplicaSet
	// is the first one.
	BackToFirstTemplate bool `json:"backToFirstTemplate"`
	// Revision is its deployment.kubernetes.io/revision annotation then.
	Revision string `json:"revision"`
	// ReplicaSets is how many ReplicaSets the namespace had then.
	ReplicaSets int `json:"replicaSets"`
}

// revisionHistoryLimit 1, then another rollout.
type historyEvidence struct {
	// ReplicaSetsLeft is how many ReplicaSets were left after another rollout
	// with revisionHistoryLimit 1 (waited for until at most 2).
	ReplicaSetsLeft int `json:"replicaSetsLeft"`
	// Limit is that revisionHistoryLimit.
	Limit int `json:"limit"`
}

// A Recreate rollout: when the old Pods stopped and the first new one came.
type recreateEvidence struct {
	// OldStopped is how many old Pods stopped (containers terminated or
	// object deleted) after the template change.
	OldStopped int `json:"oldStopped"`
	// OldGoneBeforeNew: every old Pod stopped before the first new Pod was
	// added.
	OldGoneBeforeNew bool `json:"oldGoneBeforeNew"`
	// GapMs is the time from the last old Pod stopping to the first new Pod
	// added.
	GapMs float64 `json:"gapMs"`
}

var (
	scaleUp    = framework.DeclareEvidence[scaleUpEvidence]("scaleUp", specScale)
	scaleDown  = framework.DeclareEvidence[scaleDownEvidence]("scaleDown", specScale)
	selfHeal   = framework.DeclareEvidence[selfHealEvidence]("selfHeal", specScale)
	background = framework.DeclareEvidence[backgroundEvidence]("background", specCascade)
	foreground = framework.DeclareEvidence[foregroundEvidence]("foreground", specCascade)
	orphan     = framework.DeclareEvidence[orphanEvidence]("orphan", specCascade)
	rollout    = framework.DeclareEvidence[rolloutEvidence]("rollout", specRollout)
	reconciles = framework.DeclareEvidence[reconcilesEvidence]("reconciles", specRollout)
	undo       = framework.DeclareEvidence[undoEvidence]("undo", specRollout)
	history    = framework.DeclareEvidence[historyEvidence]("history", specRollout)
	recreate   = framework.DeclareEvidence[recreateEvidence]("recreate", specRecreate)
)
