// Package suites gathers every suite, so that one binary (kubeproof, or a
// `go test` binary of this package) carries all specs. Each suite is a package
// that declares Ginkgo specs at init; importing it registers them.
package suites

import (
	// Admission: kubeproof's own webhooks installed for real, and a
	// ValidatingAdmissionPolicy.
	_ "github.com/kubeproof/kubeproof/suites/admission"
	// The API server: authentication, authorization, validation, storage,
	// discovery, concurrency, watches, kubectl's requests.
	_ "github.com/kubeproof/kubeproof/suites/apiserver"
	// Controllers: Deployment -> ReplicaSet -> Pods, garbage collection,
	// rollouts.
	_ "github.com/kubeproof/kubeproof/suites/controllers"
	// The scheduler: filtering, Pending with a reason, scoring, bypass.
	_ "github.com/kubeproof/kubeproof/suites/scheduler"
	// The kubelet: sandbox, images, status, cgroups, probes.
	_ "github.com/kubeproof/kubeproof/suites/kubelet"
	// The Pod network: IPs, readiness-gated endpoints, Service traffic.
	_ "github.com/kubeproof/kubeproof/suites/network"
	// The Pod creation flow from kubectl apply to a Ready Pod.
	_ "github.com/kubeproof/kubeproof/suites/podflow"
	// Probes: specs written in users' claims files.
	_ "github.com/kubeproof/kubeproof/suites/probes"
)
