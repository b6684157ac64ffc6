package controllers

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeproof/kubeproof/contract/cluster"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/audit"
	"github.com/kubeproof/kubeproof/kube/observe"
)

const (
	specFlow   = "controllers-deployment-flow"
	specTiming = "controllers-timing"
)

var _ = ginkgo.Describe("Deployment controllers", func() {
	f := framework.New("deploy")

	ginkgo.It("kubectl apply -f deployment.yaml: Deployment -> ReplicaSet -> 3 Pods, each owned by the one before",
		framework.Checks(specFlow, framework.Uses(cluster.AuditLog), framework.Uses(cluster.EtcdAccess)),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.ServiceAccounts, framework.Images)
			auditLog, from := f.AuditLog()
			w := watchAll(ctx, f)
			events := f.RecordEvents(ctx)
			kubectl(ctx, f, "apply", "-f", "-", bytes.NewReader(framework.Manifest("deployment.yaml")))

			ginkgo.By("the Deployment controller makes a ReplicaSet: its name, label and owner")
			rss, ok := framework.Await(ctx, w.rs, "a ReplicaSet of "+deploymentName, framework.Timeout.Controller, func(es []observe.Event) bool {
				return len(latestReplicaSets(es)) > 0
			})
			dep, err := f.Client.AppsV1().Deployments(f.Namespace).Get(ctx, deploymentName, metav1.GetOptions{})
			framework.ExpectNoError(err, "read the Deployment")
			recordDeploymentManagers(dep)
			rsEv := replicaSetEvidence{Created: ok}
			var rs *appsv1.ReplicaSet
			for _, r := range latestReplicaSets(rss) {
				rs = r
			}
			if ok {
				hash := rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
				owner := controllerRef(rs.OwnerReferences)
				rsEv = replicaSetEvidence{Created: true,
					NamePattern: strings.Replace(rs.Name, hash, "{pod-template-hash}", 1), HashLabel: hash != "",
					NameLikeExample: regexp.MustCompile(`^` + deploymentName + `-[a-z0-9]{8,10}$`).MatchString(rs.Name),
					SpecReplicas:    *rs.Spec.Replicas, OwnerAPIVersion: owner.apiVersion, OwnerKind: owner.kind, OwnerName: owner.name,
					OwnerUIDMatches: owner.uid == string(dep.UID), OwnerController: owner.controller, OwnerBlocksOwner: owner.blockOwnerDeletion,
				}
			}
			replicaSetSeen.Record(rsEv)
			if !ok {
				framework.Unmet("kube-controller-manager", "the Deployment controller created a ReplicaSet", "none within "+framework.Timeout.Controller.String())
			}
			framework.Saw("kube-controller-manager", "the deployment controller created a ReplicaSet")
			// Storage order is etcd's: a resourceVersion is the etcd revision
			// of the write that made it, and revisions only grow.
			depRV, rsRV := addedRevision(w.dp.Events()), addedRevision(w.rs.Events())
			storage.Record(storageEvidence{DeploymentBeforeReplicaSet: depRV > 0 && rsRV > depRV, DeploymentRevision: depRV, ReplicaSetRevision: rsRV})

			ginkgo.By("the ReplicaSet controller makes the Pods: names, owners, and their first stored state")
			added := func(es []observe.Event) []*corev1.Pod {
				var out []*corev1.Pod
				for _, e := range es {
					if p := framework.PodOf(e); p != nil && e.Type == watch.Added {
						out = append(out, p)
					}
				}
				return out
			}
			podEvents, _ := framework.Await(ctx, w.pod, "3 Pods of "+rs.Name, framework.Timeout.Controller, func(es []observe.Event) bool { return len(added(es)) >= 3 })
			pev := podsEvidence{}
			var podNames, created []string
			for _, p := range added(podEvents) {
				created = append(created, p.Name)
				pev.Created++
				podNames = append(podNames, strings.Replace(p.Name, rs.Name, "{replicaset}", 1))
				if o := controllerRef(p.OwnerReferences); o.kind == "ReplicaSet" && o.name == rs.Name && o.uid == string(rs.UID) {
					pev.OwnedByReplicaSet++
				}
				if p.Spec.NodeName == "" {
					pev.UnscheduledAtCreation++
				}
			}
			pev.NamePatternOK = allMatch(podNames, `^\{replicaset\}-[a-z0-9]{5}$`)
			podsSeen.Record(pev)
			if pev.Created < 3 {
				framework.Unmet("kube-controller-manager", "the ReplicaSet controller created 3 Pods", fmt.Sprintf("%d within %s", pev.Created, framework.Timeout.Controller))
			}
			framework.Saw("kube-controller-manager", "the replicaset controller created Pods")
			recordReported(ctx, events, deploymentName, rs.Name, created)
			if auditLog != nil {
				recordCreations(ctx, f, auditLog, from)
			}
			if db := f.Etcd(); db != nil {
				path := "replicasets/" + f.Namespace + "/" + rs.Name
				_, found, err := db.Find(ctx, path)
				framework.ExpectNoError(err, "find %s in etcd", path)
				depPath := "deployments/" + f.Namespace + "/" + deploymentName
				_, depFound, err := db.Find(ctx, depPath)
				framework.ExpectNoError(err, "find %s in etcd", depPath)
				flowEtcd.Record(flowEtcdEvidence{ReplicaSetStored: found, DeploymentStored: depFound})
			}

			ginkgo.By("the scheduler binds them, the kubelet runs them")
			bound, _ := framework.Await(ctx, w.pod, "3 Pods bound", framework.Timeout.Bind, func(es []observe.Event) bool { return podsNow(es).bound >= 3 })
			podsBound.Record(podsBoundEvidence{Bound: podsNow(bound).bound})
			if podsNow(bound).bound < 3 {
				framework.Unmet("kube-scheduler", "the 3 Pods were bound to nodes", fmt.Sprintf("%d within %s; the scheduler says: %s",
					podsNow(bound).bound, framework.Timeout.Bind, cmp.Or(framework.SchedulerSays(bound), "nothing (no PodScheduled condition)")))
			}
			recordScheduled(ctx, events, created)
			if auditLog != nil {
				recordBindings(ctx, f, auditLog, from)
			}
			readyEvents, _ := framework.Await(ctx, w.pod, "3 Ready Pods", framework.Timeout.PodStart, func(es []observe.Event) bool { return podsNow(es).ready >= 3 })
			state := podsNow(readyEvents)
			runtimes := map[string]bool{}
			for _, p := range state.pods {
				for _, cs := range p.Status.ContainerStatuses {
					if cs.State.Running != nil {
						name, _, _ := strings.Cut(cs.ContainerID, "://")
						runtimes[name] = true
					}
				}
			}
			podsRun.Record(podsRunEvidence{Running: state.running, Ready: state.ready, Runtimes: keys(runtimes)})
			if state.ready < 3 {
				framework.Unmet("kubelet", "the 3 Pods ran and turned Ready", fmt.Sprintf("%d running, %d Ready within %s", state.running, state.ready, framework.Timeout.PodStart))
			}
		})

	ginkgo.It("kubectl apply -f deployment.yaml, three times: when the ReplicaSet, the first Pod, its binding and its readiness come",
		framework.Checks(specTiming, framework.Requires(cluster.AuditLog)),
		framework.Takes(23),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.PodsReady, framework.PodsCreated)
			measureTimeline(ctx, f)
		})
})

// recordCreations reads, once the Pods exist, who created what, in which
// order and when.
func recordCreations(ctx context.Context, f *framework.Framework, log *audit.Log, from audit.Offset) {
	ginkgo.GinkgoHelper()
	ginkgo.By("reading the audit log: who created what, and when")
	events, err := log.WaitFor(ctx, from, framework.Timeout.Audit, "the Deployment, ReplicaSet and 3 Pod creations", audit.InNamespace(f.Namespace), func(es []audit.Event) bool {
		return count(es, "create", "pods", "", "") >= 3
	})
	framework.ExpectNoError(err, "read the creations from the audit log")

	depCreate := first(events, "create", "deployments", "", "")
	rsCreate := first(events, "create", "replicasets", "", "")
	podCreate := first(events, "create", "pods", "", "")
	gomega.Expect([]*audit.Event{depCreate, rsCreate, podCreate}).NotTo(gomega.ContainElement(gomega.BeNil()), "the audit log lacks a step of the flow")

	flowWriters.Record(flowWritersEvidence{
		DeploymentBy:      depCreate.UserAgent,
		DeploymentKubectl: strings.HasPrefix(depCreate.UserAgent, "kubectl/"),
		DeploymentCode:    depCreate.Code(),
		ReplicaSetBy:      rsCreate.User.Username,
		PodsBy:            usersOf(events, "create", "pods", ""),
		PodCreates:        count(events, "create", "pods", "", ""),
		// Reads a controller makes outside its watches: with an informer
		// cache, there should be none.
		DeploymentControllerGets: count(events, "get", "", "*", deploymentController),
		ReplicaSetControllerGets: count(events, "get", "", "*", replicaSetController),
	})
	flowOrder.Record(flowOrderEvidence{
		ReplicaSetBeforePods: rsCreate.RequestReceivedTimestamp.Before(podCreate.RequestReceivedTimestamp),
		// The 201 goes out when the create's response completes: had a
		// ReplicaSet or Pod been stored by then, it existed "at the 201".
		NoReplicaSetAt201:       !rsCreate.StageTimestamp.Before(depCreate.StageTimestamp),
		NoPodAt201:              !podCreate.StageTimestamp.Before(depCreate.StageTimestamp),
		DeploymentResponseMs:    framework.Millis(depCreate.StageTimestamp.Sub(depCreate.RequestReceivedTimestamp)),
		ReplicaSetStoredAfterMs: framework.Millis(rsCreate.StageTimestamp.Sub(depCreate.RequestReceivedTimestamp)),
	})
}

// recordBindings reads, once the Pods are bound, who bound them.
func recordBindings(ctx context.Context, f *framework.Framework, log *audit.Log, from audit.Offset) {
	ginkgo.GinkgoHelper()
	events, err := log.WaitFor(ctx, from, framework.Timeout.Audit, "3 bindings", audit.InNamespace(f.Namespace), func(es []audit.Event) bool {
		return count(es, "create", "pods", "binding", "") >= 3
	})
	framework.ExpectNoError(err, "read the bindings from the audit log")
	podCreate := first(events, "create", "pods", "", "")
	binding := first(events, "create", "pods", "binding", "")
	flowBindings.Record(bindingsEvidence{Count: count(events, "create", "pods", "binding", ""), By: usersOf(events, "create", "pods", "binding"),
		PodsBeforeBinding: podCreate.RequestReceivedTimestamp.Before(binding.RequestReceivedTimestamp)})
}

func allMatch(ss []string, re string) bool {
	r := regexp.MustCompile(re)
	for _, s := range ss {
		if !r.MatchString(s) {
			return false
		}
	}
	return len(ss) > 0
}

// addedRevision is the resourceVersion of the first object a watch saw
// added (0 if none).
func addedRevision(events []observe.Event) int64 {
	for _, e := range events {
		if e.Type != watch.Added {
			continue
		}
		if m, err := meta.Accessor(e.Object); err == nil {
			rv, _ := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
			return rv
		}
	}
	return 0
}

// Evidence: what the specs above record, under the names the claims files use.

// The ReplicaSet the Deployment controller made (Created false: none
// within Timeout.Controller).
type replicaSetEvidence struct {
	// Created: a ReplicaSet of the Deployment appeared within
	// Timeout.Controller.
	Created bool `json:"created"`
	// NamePattern is the ReplicaSet's name with its pod-template-hash
	// replaced by {pod-template-hash}.
	NamePattern string `json:"namePattern"`
	// HashLabel: the ReplicaSet carries a pod-template-hash label.
	HashLabel bool `json:"hashLabel"`
	// NameLikeExample: the name is the Deployment's, a dash and 8 to 10
	// lowercase letters or digits.
	NameLikeExample bool `json:"nameLikeExample"`
	// SpecReplicas is the ReplicaSet's spec.replicas.
	SpecReplicas int32 `json:"specReplicas"`
	// OwnerAPIVersion is the apiVersion of the ReplicaSet's controller owner
	// reference.
	OwnerAPIVersion string `json:"ownerAPIVersion"`
	// OwnerKind is the kind of its controller owner reference.
	OwnerKind string `json:"ownerKind"`
	// OwnerName is the name of its controller owner reference.
	OwnerName string `json:"ownerName"`
	// OwnerUIDMatches: the owner reference's UID is the Deployment's.
	OwnerUIDMatches bool `json:"ownerUIDMatches"`
	// OwnerController: the owner reference has controller: true.
	OwnerController bool `json:"ownerController"`
	// OwnerBlocksOwner: the owner reference has blockOwnerDeletion: true.
	OwnerBlocksOwner bool `json:"ownerBlocksOwner"`
}

// The Pods the ReplicaSet controller made, as first stored.
type podsEvidence struct {
	// Created is how many Pods the watch saw added.
	Created int `json:"created"`
	// NamePatternOK: every Pod is named after the ReplicaSet, a dash and 5
	// lowercase letters or digits.
	NamePatternOK bool `json:"namePatternOK"`
	// OwnedByReplicaSet is how many of them have the ReplicaSet as controller
	// owner, by its UID: the API server gives an object its UID when it
	// stores it, so each of these Pods was made after the ReplicaSet.
	OwnedByReplicaSet int `json:"ownedByReplicaSet"`
	// UnscheduledAtCreation is how many had no nodeName when first stored.
	UnscheduledAtCreation int `json:"unscheduledAtCreation"`
}

// How many of them the scheduler bound within Timeout.Bind.
type podsBoundEvidence struct {
	// Bound is how many of the Pods had a node within Timeout.Bind.
	Bound int `json:"bound"`
}

// How many of them the kubelet ran, and with which runtime.
type podsRunEvidence struct {
	// Running is how many of the Pods were running when 3 were Ready or
	// Timeout.PodStart passed.
	Running int `json:"running"`
	// Ready is how many of them were Ready then.
	Ready int `json:"ready"`
	// Runtimes are the runtimes of their running containers (the scheme of
	// the container IDs, e.g. containerd), sorted.
	Runtimes []string `json:"runtimes"`
}

// The order etcd stored the Deployment and the ReplicaSet in.
type storageEvidence struct {
	// DeploymentBeforeReplicaSet: the ReplicaSet's creation has a higher etcd
	// revision than the Deployment's.
	DeploymentBeforeReplicaSet bool `json:"deploymentBeforeReplicaSet"`
	// DeploymentRevision is the resourceVersion (etcd revision) the
	// Deployment was added with.
	DeploymentRevision int64 `json:"deploymentRevision"`
	// ReplicaSetRevision is the resourceVersion (etcd revision) the
	// ReplicaSet was added with.
	ReplicaSetRevision int64 `json:"replicaSetRevision"`
}

// Who created what, from the audit log.
type flowWritersEvidence struct {
	// DeploymentBy is the user agent of the Deployment's create request.
	DeploymentBy string `json:"deploymentBy"`
	// DeploymentKubectl: that user agent is kubectl's.
	DeploymentKubectl bool `json:"deploymentKubectl"`
	// DeploymentCode is the HTTP status code of the Deployment's create.
	DeploymentCode int `json:"deploymentCode"`
	// ReplicaSetBy is the user that created the ReplicaSet.
	ReplicaSetBy string `json:"replicaSetBy"`
	// PodsBy are the users that created the Pods.
	PodsBy []string `json:"podsBy"`
	// PodCreates is how many Pod creates the audit log has.
	PodCreates int `json:"podCreates"`
	// DeploymentControllerGets and ReplicaSetControllerGets are the GETs each
	// controller sent (reads outside its watches).
	DeploymentControllerGets int `json:"deploymentControllerGets"`
	ReplicaSetControllerGets int `json:"replicaSetControllerGets"`
}

// Who bound the Pods, and whether after their creation, from the audit log.
type bindingsEvidence struct {
	// Count is how many binding creates the audit log has.
	Count int `json:"count"`
	// By are the users that created the bindings.
	By []string `json:"by"`
	// PodsBeforeBinding: the first Pod create arrived before the first
	// binding.
	PodsBeforeBinding bool `json:"podsBeforeBinding"`
}

// The order of the creations, from the audit log.
type flowOrderEvidence struct {
	// ReplicaSetBeforePods: the ReplicaSet's create arrived before the first
	// Pod's.
	ReplicaSetBeforePods bool `json:"replicaSetBeforePods"`
	// NoReplicaSetAt201 and NoPodAt201: the ReplicaSet (the first Pod) was
	// not stored before the Deployment's create completed.
	NoReplicaSetAt201 bool `json:"noReplicaSetAt201"`
	NoPodAt201        bool `json:"noPodAt201"`
	// DeploymentResponseMs is the Deployment create's time from arrival to
	// response.
	DeploymentResponseMs float64 `json:"deploymentResponseMs"`
	// ReplicaSetStoredAfterMs is the time from the Deployment create's
	// arrival to the ReplicaSet create's response.
	ReplicaSetStoredAfterMs float64 `json:"replicaSetStoredAfterMs"`
}

// Whether etcd holds the Deployment and its ReplicaSet.
type flowEtcdEvidence struct {
	// ReplicaSetStored: etcd has the ReplicaSet's key.
	ReplicaSetStored bool `json:"replicaSetStored"`
	// DeploymentStored: etcd has the Deployment's key.
	DeploymentStored bool `json:"deploymentStored"`
}

var (
	replicaSetSeen = framework.DeclareEvidence[replicaSetEvidence]("replicaSet", specFlow)
	podsSeen       = framework.DeclareEvidence[podsEvidence]("pods", specFlow)
	podsBound      = framework.DeclareEvidence[podsBoundEvidence]("podsBound", specFlow)
	podsRun        = framework.DeclareEvidence[podsRunEvidence]("podsRun", specFlow)
	storage        = framework.DeclareEvidence[storageEvidence]("storage", specFlow)
	flowWriters    = framework.DeclareEvidence[flowWritersEvidence]("writers", specFlow)
	flowOrder      = framework.DeclareEvidence[flowOrderEvidence]("order", specFlow)
	flowBindings   = framework.DeclareEvidence[bindingsEvidence]("bindings", specFlow)
	flowEtcd       = framework.DeclareEvidence[flowEtcdEvidence]("etcd", specFlow)
)
