package framework

import (
	"time"

	"github.com/onsi/ginkgo/v2"
)

// Timeouts bound every wait and observation window of the specs. They live
// in one place so that a window means the same thing in every spec, and so
// that they scale together on a slow machine (--kubeproof.timeout-scale).
//
// Each bounds what a healthy cluster does in well under a tenth of it; a
// component that has not acted within it is reported as not seen doing so
// (a finding about the component), never as a harness error.
type Timeouts struct {
	// Bind: the scheduler binds a Pod it can place, or says why not.
	Bind time.Duration
	// PodStart: a bound Pod's containers run and it turns Ready (our
	// images are on the node, so this only absorbs a loaded machine).
	PodStart time.Duration
	// Controller: a controller acts on a change it watches (a ReplicaSet
	// for a Deployment, Pods for a ReplicaSet, dependents deleted).
	Controller time.Duration
	// Rollout: a Deployment's rollout completes.
	Rollout time.Duration
	// Endpoint: an EndpointSlice follows a Pod's readiness.
	Endpoint time.Duration
	// Traffic: Service traffic follows the endpoints (kube-proxy).
	Traffic time.Duration
	// Admission: a webhook configuration or admission policy takes effect.
	Admission time.Duration
	// Audit: a request shows up in the audit log.
	Audit time.Duration
	// API: the API server's own asynchronous work (a new RBAC binding, a
	// CRD becoming served, an authenticator fetching keys).
	API time.Duration
	// NamespaceDelete: the run's namespaces are gone at the end.
	NamespaceDelete time.Duration
}

// DefaultTimeouts are the windows on a machine like CI's (2 cores).
func DefaultTimeouts() Timeouts {
	return Timeouts{
		Bind:            30 * time.Second,
		PodStart:        2 * time.Minute,
		Controller:      30 * time.Second,
		Rollout:         3 * time.Minute,
		Endpoint:        30 * time.Second,
		Traffic:         30 * time.Second,
		Admission:       30 * time.Second,
		Audit:           30 * time.Second,
		API:             30 * time.Second,
		NamespaceDelete: 3 * time.Minute,
	}
}

// Scaled multiplies every timeout by f.
func (t Timeouts) Scaled(f float64) Timeouts {
	s := func(d time.Duration) time.Duration { return time.Duration(float64(d) * f) }
	return Timeouts{
		Bind: s(t.Bind), PodStart: s(t.PodStart), Controller: s(t.Controller), Rollout: s(t.Rollout),
		Endpoint: s(t.Endpoint), Traffic: s(t.Traffic), Admission: s(t.Admission), Audit: s(t.Audit),
		API: s(t.API), NamespaceDelete: s(t.NamespaceDelete),
	}
}

// Timeout holds the run's timeouts: DefaultTimeouts scaled by the
// --kubeproof.timeout-scale flag (set once the flags are parsed).
var Timeout = DefaultTimeouts()

// Takes says roughly how many seconds a long spec takes on a 2-core machine
// (measured on the local cluster under `--parallel 4`). Ginkgo starts the
// specs with the largest value first, so that under -p the long ones do not
// start last and leave the other processes idle while they finish.
func Takes(seconds int) ginkgo.SpecPriority { return ginkgo.SpecPriority(seconds) }

// Scale scales a window not among Timeouts (a probe's own) as the run's
// are scaled.
func Scale(d time.Duration) time.Duration {
	if TestContext.TimeoutScale > 0 {
		return time.Duration(float64(d) * TestContext.TimeoutScale)
	}
	return d
}
