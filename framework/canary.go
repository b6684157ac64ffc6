package framework

import (
	"fmt"
	"slices"

	"github.com/onsi/ginkgo/v2"

	"github.com/kubeproof/kubeproof/kube/access"
)

// Fact is one step on the paths from a Pod or a Deployment to a ready
// Service endpoint that many specs stand on. Before any spec runs, the
// canary takes both paths once (a Pod of the test app behind a Service,
// and a one-replica Deployment) and notes which steps the cluster took. A
// spec that needs a step (Needs) but does not check it stops at once when
// the canary did not see it happen, so a broken component costs one
// window, not one per spec, and the claims of those specs are not
// checkable, naming the step and its component.
type Fact int

// The canary's steps.
const (
	ServiceAccounts Fact = iota
	Images
	PodsBound
	PodsRunning
	PodsReady
	Endpoints
	ReplicaSets
	PodsCreated
	factCount
)

// factInfo says what each step is, which component takes it, the steps it
// needs, and the permission the canary needs to take it (nil: only a
// namespace).
var factInfo = [factCount]struct {
	component, what string
	after           []Fact
	perm            *access.Permission
}{
	ServiceAccounts: {"kube-controller-manager", "a new namespace got its default ServiceAccount (serviceaccount controller)", nil, nil},
	Images:          {"kubelet", "kubeproof's test image ran on a node (loaded there, or pulled from the run's registry)", []Fact{ServiceAccounts}, &access.Pods},
	PodsBound:       {"kube-scheduler", "a Pod was bound to a node", []Fact{ServiceAccounts}, &access.Pods},
	PodsRunning:     {"kubelet", "a bound Pod's container was started", []Fact{PodsBound, Images}, nil},
	PodsReady:       {"kubelet", "a running Pod turned Ready (readiness probe)", []Fact{PodsRunning}, nil},
	Endpoints:       {"kube-controller-manager", "a Ready Pod became a ready endpoint of its Service (endpointslice controller)", []Fact{PodsReady}, nil},
	ReplicaSets:     {"kube-controller-manager", "a Deployment got a ReplicaSet (deployment controller)", nil, &access.Deployments},
	PodsCreated:     {"kube-controller-manager", "a ReplicaSet got its Pod (replicaset controller)", []Fact{ReplicaSets, ServiceAccounts}, nil},
}

// chain is fact and every step it needs, each before the steps that need
// it.
func chain(fact Fact) []Fact {
	var out []Fact
	var visit func(f Fact)
	visit = func(f Fact) {
		for _, g := range factInfo[f].after {
			visit(g)
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	visit(fact)
	return out
}

// canaryStep is what the canary saw of one step.
type canaryStep struct {
	// Reached: the steps before it happened, so it was waited for.
	Reached bool    `json:"reached"`
	OK      bool    `json:"ok"`
	Ms      float64 `json:"ms"`
	Detail  string  `json:"detail,omitempty"`
	// Unavailable: the step is Images and the nodes could neither find nor
	// pull them. That is how the run was set up, not a fault of the
	// cluster: specs that need them are skipped.
	Unavailable bool `json:"unavailable,omitempty"`
}

// canary holds the steps as the canary saw them, in every process.
var canary [factCount]canaryStep

// Needs stops the spec when the canary saw step f, or a step it needs, not
// happen: the spec's claims are then not checkable, naming the step.
// Specs that check a step themselves do not call Needs for it: they
// observe it in their own window and record what they saw.
func (f *Framework) Needs(facts ...Fact) {
	ginkgo.GinkgoHelper()
	for _, fact := range facts {
		for _, g := range chain(fact) {
			if p := factInfo[g].perm; p != nil {
				f.NeedsAccess(*p)
			}
			s := canary[g]
			if s.Unavailable {
				ginkgo.Skip("the spec runs kubeproof's images, which the nodes do not have: " + s.Detail)
			}
			if !s.OK {
				stop(factInfo[g].component, factInfo[g].what, "the canary before the specs saw it not happen: "+s.Detail)
			}
		}
	}
}

// CanarySaw reports whether the canary saw step fact and every step it
// needs happen, and, when it did not, which did not and why: for a spec
// that can do without the step (it records the evidence that needs it as
// unobservable and goes on) rather than stop, as Needs does.
func CanarySaw(fact Fact) (bool, string) {
	for _, g := range chain(fact) {
		if s := canary[g]; !s.OK {
			return false, fmt.Sprintf("the canary before the specs saw %s not happen (%s): %s", factInfo[g].what, factInfo[g].component, s.Detail)
		}
	}
	return true, ""
}

// denied are the permissions the run's user lacks (access.Permission's
// String -> the authorizer's reason), as the canary asked in its namespace.
var denied map[string]string

// NeedsAccess skips the spec when the run's user lacks permission p: on a
// cluster kubeproof did not make, that is how the cluster was shared with
// it, not a fault of the cluster.
func (f *Framework) NeedsAccess(perms ...access.Permission) {
	ginkgo.GinkgoHelper()
	for _, p := range perms {
		if reason, ok := denied[p.String()]; ok {
			ginkgo.Skip(fmt.Sprintf("the kubeconfig's user may not %s (SelfSubjectAccessReview%s), which %s needs", p, reasonSuffix(reason), p.For))
		}
	}
}

func reasonSuffix(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
}
