// Package controllers observes what happens after `kubectl apply -f
// deployment.yaml` (seeds 001 and 004): the Deployment controller makes a
// ReplicaSet, the ReplicaSet controller makes Pods, each owned by the one
// before; scaling, self-healing, cascading deletion and rollouts.
package controllers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/audit"
	"github.com/kubeproof/kubeproof/framework/cluster"
	"github.com/kubeproof/kubeproof/framework/observe"
)

// Identities of the controllers, as the API server authenticates them
// (kube-controller-manager runs with --use-service-account-credentials).
const (
	deploymentController = "system:serviceaccount:kube-system:deployment-controller"
	replicaSetController = "system:serviceaccount:kube-system:replicaset-controller"
	garbageCollector     = "system:serviceaccount:kube-system:generic-garbage-collector"
	scheduler            = "system:kube-scheduler"
)

const deploymentName = "nginx-deployment"

// The specs of this package.
const (
	specFlow     = "controllers-deployment-flow"
	specTiming   = "controllers-timing"
	specScale    = "controllers-scale"
	specCascade  = "controllers-cascade"
	specRollout  = "controllers-rollout"
	specRecreate = "controllers-recreate"
)

var _ = ginkgo.Describe("Deployment controllers", func() {
	f := framework.New("deploy")

	ginkgo.It("kubectl apply -f deployment.yaml: Deployment -> ReplicaSet -> 3 Pods, each owned by the one before",
		framework.Checks(specFlow),
		func(ctx ginkgo.SpecContext) {
			f.Needs(framework.ServiceAccounts, framework.Images)
			auditLog, from := f.AuditLog()
			w := watchAll(ctx, f)
			kubectl(ctx, f, "apply", "-f", "-", bytes.NewReader(framework.Manifest("deployment.yaml")))

			ginkgo.By("the Deployment controller makes a ReplicaSet: its name, label and owner")
			rss, ok := framework.Await(ctx, w.rs, "a ReplicaSet of "+deploymentName, framework.Timeout.Controller, func(es []observe.Event) bool {
				return len(latestReplicaSets(es)) > 0
			})
			dep, err := f.Client.AppsV1().Deployments(f.Namespace).Get(ctx, deploymentName, metav1.GetOptions{})
			framework.ExpectNoError(err, "read the Deployment")
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
			var podNames []string
			for _, p := range added(podEvents) {
				pev.Created++
				podNames = append(podNames, strings.Replace(p.Name, rs.Name, "{replicaset}", 1))
				if o := controllerRef(p.OwnerReferences); o.kind == "ReplicaSet" && o.name == rs.Name {
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
			if auditLog != nil {
				recordCreations(ctx, f, auditLog, from)
			}
			if db := f.Etcd(); db != nil {
				key := "/registry/replicasets/" + f.Namespace + "/" + rs.Name
				_, found, err := db.Get(ctx, key)
				framework.ExpectNoError(err, "read %s", key)
				depKey := "/registry/deployments/" + f.Namespace + "/" + deploymentName
				_, depFound, err := db.Get(ctx, depKey)
				framework.ExpectNoError(err, "read %s", depKey)
				flowEtcd.Record(flowEtcdEvidence{ReplicaSetStored: found, DeploymentStored: depFound})
			}

			ginkgo.By("the scheduler binds them, the kubelet runs them")
			bound, _ := framework.Await(ctx, w.pod, "3 Pods bound", framework.Timeout.Bind, func(es []observe.Event) bool { return podsNow(es).bound >= 3 })
			podsBound.Record(podsBoundEvidence{Bound: podsNow(bound).bound})
			if podsNow(bound).bound < 3 {
				framework.Unmet("kube-scheduler", "the 3 Pods were bound to nodes", fmt.Sprintf("%d within %s", podsNow(bound).bound, framework.Timeout.Bind))
			}
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
		framework.Checks(specTiming),
		framework.Takes(23),
		func(ctx ginkgo.SpecContext) {
			f.Require(cluster.AuditLog)
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

// timelineSamples is how often the timing spec applies deployment.yaml.
const timelineSamples = 3

// measureTimeline applies deployment.yaml (under new names) one after the
// other, each until its Pods are Ready, and records when the first
// ReplicaSet, Pod, binding and Ready Pod came after the Deployment's create
// request (audit log times; Ready as the watch received it).
func measureTimeline(ctx context.Context, f *framework.Framework) {
	ginkgo.GinkgoHelper()
	log, from := f.AuditLog()
	w := watchAll(ctx, f)
	readyAt := map[string]time.Time{}
	names := make([]string, timelineSamples)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", deploymentName, i)
		create(ctx, f, deployment(names[i], 3))
		events, ok := framework.Await(ctx, w.pod, "3 Ready Pods of "+names[i], framework.Timeout.PodStart, func(es []observe.Event) bool {
			return podsNow(es).readyWithPrefix(names[i]+"-") >= 3
		})
		if !ok {
			framework.Unmet("kubelet", "the Pods of "+names[i]+" turned Ready", fmt.Sprintf("last seen: %+v", podsNow(events).names))
		}
		for _, e := range events {
			if p := framework.PodOf(e); p != nil && strings.HasPrefix(p.Name, names[i]+"-") && framework.PodReady(p) {
				readyAt[names[i]] = e.Received
				break
			}
		}
	}
	events, err := log.WaitFor(ctx, from, framework.Timeout.Audit, "every Deployment's first binding", audit.InNamespace(f.Namespace), func(es []audit.Event) bool {
		return count(es, "create", "pods", "binding", "") >= 3*timelineSamples
	})
	framework.ExpectNoError(err, "read the applies from the audit log")
	var createdMs, rsMs, podMs, bindMs, kubeletMs, readyMs []float64
	inOrder, createdFirst := true, 0
	for _, name := range names {
		dep := firstOf(events, "create", "deployments", "", func(e audit.Event) bool { return e.ObjectRef.Name == name })
		rs := firstOf(events, "create", "replicasets", "", func(e audit.Event) bool { return strings.HasPrefix(createdName(e), name+"-") })
		pod := firstOf(events, "create", "pods", "", func(e audit.Event) bool { return strings.HasPrefix(createdName(e), name+"-") })
		bind := firstOf(events, "create", "pods", "binding", func(e audit.Event) bool { return strings.HasPrefix(e.ObjectRef.Name, name+"-") })
		gomega.Expect([]*audit.Event{dep, rs, pod, bind}).NotTo(gomega.ContainElement(gomega.BeNil()), "the audit log lacks a step of %s's flow", name)
		// The first status write of a kubelet for one of its Pods: the
		// kubelet has taken a bound Pod up.
		kubelet := firstOf(events, "patch", "pods", "status", func(e audit.Event) bool {
			return strings.HasPrefix(e.ObjectRef.Name, name+"-") && strings.HasPrefix(e.User.Username, "system:node:")
		})
		if kubelet == nil {
			framework.Unmet("kubelet", "a kubelet wrote the status of a Pod of "+name, "no status write by a kubelet in the audit log")
		}
		t0 := dep.RequestReceivedTimestamp
		created := dep.StageTimestamp // the 201's response completes
		createdMs = append(createdMs, framework.Millis(created.Sub(t0)))
		rsMs = append(rsMs, framework.Millis(rs.RequestReceivedTimestamp.Sub(t0)))
		podMs = append(podMs, framework.Millis(pod.RequestReceivedTimestamp.Sub(t0)))
		bindMs = append(bindMs, framework.Millis(bind.RequestReceivedTimestamp.Sub(t0)))
		kubeletMs = append(kubeletMs, framework.Millis(kubelet.RequestReceivedTimestamp.Sub(t0)))
		readyMs = append(readyMs, framework.Millis(readyAt[name].Sub(t0)))
		// The timeline's order, each step caused by the one before:
		// ReplicaSet, Pod, binding, kubelet, Ready. The 201 is not one of
		// them: the Deployment controller reacts to the stored Deployment,
		// and may send its ReplicaSet before the 201's response is done.
		steps := []time.Time{rs.RequestReceivedTimestamp, pod.RequestReceivedTimestamp, bind.RequestReceivedTimestamp,
			kubelet.RequestReceivedTimestamp, readyAt[name]}
		for i := 1; i < len(steps); i++ {
			inOrder = inOrder && !steps[i].Before(steps[i-1])
		}
		if created.Before(rs.RequestReceivedTimestamp) {
			createdFirst++
		}
	}
	timeline.Record(timelineEvidence{CreatedMs: framework.NewSamples(createdMs), ReplicaSetMs: framework.NewSamples(rsMs), PodMs: framework.NewSamples(podMs),
		BindingMs: framework.NewSamples(bindMs), KubeletMs: framework.NewSamples(kubeletMs), ReadyMs: framework.NewSamples(readyMs),
		InOrder: inOrder, CreatedBeforeReplicaSet: createdFirst})
}

// createdName is the name of the object a create made: the request names
// it only in its body when the name is generated.
func createdName(e audit.Event) string {
	if e.ObjectRef.Name != "" {
		return e.ObjectRef.Name
	}
	var obj struct {
		Metadata struct{ Name, GenerateName string }
	}
	_ = json.Unmarshal(e.RequestObject, &obj)
	if obj.Metadata.Name != "" {
		return obj.Metadata.Name
	}
	return obj.Metadata.GenerateName
}

func firstOf(es []audit.Event, verb, resource, subresource string, also func(audit.Event) bool) *audit.Event {
	for i, e := range es {
		if matches(e, verb, resource, subresource, "") && also(e) {
			return &es[i]
		}
	}
	return nil
}

func first(es []audit.Event, verb, resource, subresource, user string) *audit.Event {
	for i, e := range es {
		if matches(e, verb, resource, subresource, user) {
			return &es[i]
		}
	}
	return nil
}

func count(es []audit.Event, verb, resource, subresource, user string) int {
	n := 0
	for _, e := range es {
		if matches(e, verb, resource, subresource, user) {
			n++
		}
	}
	return n
}

// matches selects audit events: resource "" and subresource "*" match any,
// user "" matches anyone.
func matches(e audit.Event, verb, resource, subresource, user string) bool {
	return e.Verb == verb && (resource == "" || e.ObjectRef.Resource == resource) &&
		(subresource == "*" || e.ObjectRef.Subresource == subresource) && (user == "" || e.User.Username == user)
}

func usersOf(es []audit.Event, verb, resource, subresource string) []string {
	seen := map[string]bool{}
	for _, e := range es {
		if matches(e, verb, resource, subresource, "") {
			seen[e.User.Username] = true
		}
	}
	return keys(seen)
}

// ownerRef is a controller owner reference's fields.
type ownerRef struct {
	apiVersion, kind, name, uid    string
	controller, blockOwnerDeletion bool
}

// controllerRef returns the controller owner reference (zero if none).
func controllerRef(refs []metav1.OwnerReference) ownerRef {
	for _, r := range refs {
		if r.Controller != nil && *r.Controller {
			return ownerRef{apiVersion: r.APIVersion, kind: r.Kind, name: r.Name, uid: string(r.UID),
				controller: true, blockOwnerDeletion: r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion}
		}
	}
	return ownerRef{}
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

func keys(m map[string]bool) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	return out
}

// deployment is deployment.yaml with another name and replica count.
func deployment(name string, replicas int32) *appsv1.Deployment {
	var d appsv1.Deployment
	if err := yaml.Unmarshal(framework.Manifest("deployment.yaml"), &d); err != nil {
		panic(err)
	}
	d.Name = name
	d.Spec.Replicas = &replicas
	return &d
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
	Created          bool   `json:"created"`
	NamePattern      string `json:"namePattern"`
	HashLabel        bool   `json:"hashLabel"`
	NameLikeExample  bool   `json:"nameLikeExample"`
	SpecReplicas     int32  `json:"specReplicas"`
	OwnerAPIVersion  string `json:"ownerAPIVersion"`
	OwnerKind        string `json:"ownerKind"`
	OwnerName        string `json:"ownerName"`
	OwnerUIDMatches  bool   `json:"ownerUIDMatches"`
	OwnerController  bool   `json:"ownerController"`
	OwnerBlocksOwner bool   `json:"ownerBlocksOwner"`
}

// The Pods the ReplicaSet controller made, as first stored.
type podsEvidence struct {
	Created               int  `json:"created"`
	NamePatternOK         bool `json:"namePatternOK"`
	OwnedByReplicaSet     int  `json:"ownedByReplicaSet"`
	UnscheduledAtCreation int  `json:"unscheduledAtCreation"`
}

// How many of them the scheduler bound within Timeout.Bind.
type podsBoundEvidence struct {
	Bound int `json:"bound"`
}

// How many of them the kubelet ran, and with which runtime.
type podsRunEvidence struct {
	Running  int      `json:"running"`
	Ready    int      `json:"ready"`
	Runtimes []string `json:"runtimes"`
}

// The order etcd stored the Deployment and the ReplicaSet in.
type storageEvidence struct {
	DeploymentBeforeReplicaSet bool  `json:"deploymentBeforeReplicaSet"`
	DeploymentRevision         int64 `json:"deploymentRevision"`
	ReplicaSetRevision         int64 `json:"replicaSetRevision"`
}

// Who created what, from the audit log.
type flowWritersEvidence struct {
	DeploymentBy             string   `json:"deploymentBy"`
	DeploymentKubectl        bool     `json:"deploymentKubectl"`
	DeploymentCode           int      `json:"deploymentCode"`
	ReplicaSetBy             string   `json:"replicaSetBy"`
	PodsBy                   []string `json:"podsBy"`
	PodCreates               int      `json:"podCreates"`
	DeploymentControllerGets int      `json:"deploymentControllerGets"`
	ReplicaSetControllerGets int      `json:"replicaSetControllerGets"`
}

// Who bound the Pods, and whether after their creation, from the audit log.
type bindingsEvidence struct {
	Count             int      `json:"count"`
	By                []string `json:"by"`
	PodsBeforeBinding bool     `json:"podsBeforeBinding"`
}

// The order of the creations, from the audit log.
type flowOrderEvidence struct {
	ReplicaSetBeforePods    bool    `json:"replicaSetBeforePods"`
	NoReplicaSetAt201       bool    `json:"noReplicaSetAt201"`
	NoPodAt201              bool    `json:"noPodAt201"`
	DeploymentResponseMs    float64 `json:"deploymentResponseMs"`
	ReplicaSetStoredAfterMs float64 `json:"replicaSetStoredAfterMs"`
}

// Whether etcd holds the Deployment and its ReplicaSet.
type flowEtcdEvidence struct {
	ReplicaSetStored bool `json:"replicaSetStored"`
	DeploymentStored bool `json:"deploymentStored"`
}

// The first ReplicaSet, Pod, binding and Ready Pod after kubectl apply,
// over several applies.
type timelineEvidence struct {
	// CreatedMs: the Deployment's 201 Created (its create's response).
	CreatedMs    framework.Samples `json:"createdMs"`
	ReplicaSetMs framework.Samples `json:"replicaSetMs"`
	PodMs        framework.Samples `json:"podMs"`
	BindingMs    framework.Samples `json:"bindingMs"`
	// KubeletMs: a kubelet's first status write for one of the Pods.
	KubeletMs framework.Samples `json:"kubeletMs"`
	ReadyMs   framework.Samples `json:"readyMs"`
	// InOrder: in every apply, ReplicaSet, Pod, binding, kubelet and Ready
	// came in this order.
	InOrder bool `json:"inOrder"`
	// CreatedBeforeReplicaSet: in how many applies the 201's response was
	// done before the ReplicaSet's create arrived (they race).
	CreatedBeforeReplicaSet int `json:"createdBeforeReplicaSet"`
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
	timeline       = framework.DeclareEvidence[timelineEvidence]("timeline", specTiming)
)
