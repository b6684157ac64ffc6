// Package controllers observes what happens after `kubectl apply -f
// deployment.yaml` (seeds 001 and 004): the Deployment controller makes a
// ReplicaSet, the ReplicaSet controller makes Pods, each owned by the one
// before; scaling, self-healing, cascading deletion and rollouts.
package controllers

import (
	"bytes"
	"context"
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
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"github.com/kubeproof/kubeproof/fixtures"
	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/framework/audit"
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

var _ = ginkgo.Describe("Deployment controllers", func() {
	f := framework.New("deploy")

	ginkgo.It("kubectl apply -f deployment.yaml: Deployment -> ReplicaSet -> 3 Pods, each owned by the one before",
		framework.Checks("controllers-deployment-flow",
			"001-STORED", "001-DEPLOYMENT-CONTROLLER", "001-DESIRED-VS-CURRENT", "001-RS-NAME", "001-RS-STORED",
			"001-RS-CONTROLLER", "001-PODS-UNSCHEDULED", "001-SCHEDULER-BINDING", "001-KUBELET-RUNS", "001-FLOW-ORDER",
			"004-CONTROLLER-CHAIN", "004-LOOSE-COUPLING", "004-POD-NOT-YET-AT-201", "004-OWNERREF",
			"004-INFORMER-CACHE", "004-TIME-RS", "004-TIME-POD", "004-TIME-BIND", "004-TIME-READY"),
		func(ctx ginkgo.SpecContext) {
			auditLog, from := f.AuditLog()
			pods := f.RecordPods(ctx)
			apps := f.Client.AppsV1().RESTClient()
			deployments := f.Record(ctx, "Deployments", cache.NewListWatchFromClient(apps, "deployments", f.Namespace, fields.Everything()))
			replicaSets := f.Record(ctx, "ReplicaSets", cache.NewListWatchFromClient(apps, "replicasets", f.Namespace, fields.Everything()))
			res, err := f.Kubectl.Run(ctx, bytes.NewReader(fixtures.MustRead("deployment.yaml")), "apply", "-f", "-", "--namespace", f.Namespace)
			framework.ExpectNoError(err, "run kubectl apply")
			gomega.Expect(res.ExitCode).To(gomega.Equal(0), res.String())

			ginkgo.By("three Pods, Ready")
			_, _, events := framework.WaitForPodEvent(ctx, pods, "3 Ready Pods", func(_ observe.Event, _ *corev1.Pod) bool {
				return podsNow(pods.Events()).ready >= 3
			})
			dep, err := f.Client.AppsV1().Deployments(f.Namespace).Get(ctx, deploymentName, metav1.GetOptions{})
			framework.ExpectNoError(err, "read the Deployment")
			rsList, err := f.Client.AppsV1().ReplicaSets(f.Namespace).List(ctx, metav1.ListOptions{})
			framework.ExpectNoError(err, "list ReplicaSets")
			gomega.Expect(rsList.Items).To(gomega.HaveLen(1), "one ReplicaSet")
			rs := rsList.Items[0]

			ginkgo.By("the ReplicaSet: its name, label and owner")
			hash := rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
			owner := controllerRef(rs.OwnerReferences)
			framework.Evidence("replicaSet", map[string]any{
				"namePattern":      strings.Replace(rs.Name, hash, "{pod-template-hash}", 1),
				"hashLabel":        hash != "",
				"nameLikeExample":  regexp.MustCompile(`^` + deploymentName + `-[a-z0-9]{8,10}$`).MatchString(rs.Name),
				"specReplicas":     *rs.Spec.Replicas,
				"ownerAPIVersion":  owner["apiVersion"],
				"ownerKind":        owner["kind"],
				"ownerName":        owner["name"],
				"ownerUIDMatches":  owner["uid"] == string(dep.UID),
				"ownerController":  owner["controller"],
				"ownerBlocksOwner": owner["blockOwnerDeletion"],
			})

			ginkgo.By("the Pods: names, owners, and their first stored state")
			var podNames []string
			ownedByRS, unscheduledAtCreation, running := 0, 0, 0
			for _, e := range events {
				p := framework.PodOf(e)
				if p == nil || e.Type != watch.Added {
					continue
				}
				podNames = append(podNames, strings.Replace(p.Name, rs.Name, "{replicaset}", 1))
				if o := controllerRef(p.OwnerReferences); o["kind"] == "ReplicaSet" && o["name"] == rs.Name {
					ownedByRS++
				}
				if p.Spec.NodeName == "" {
					unscheduledAtCreation++
				}
			}
			current, err := f.Client.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{})
			framework.ExpectNoError(err, "list Pods")
			runtimes := map[string]bool{}
			for _, p := range current.Items {
				for _, cs := range p.Status.ContainerStatuses {
					if cs.State.Running != nil {
						running++
						name, _, _ := strings.Cut(cs.ContainerID, "://")
						runtimes[name] = true
					}
				}
			}
			framework.Evidence("pods", map[string]any{
				"created": len(podNames), "namePatternOK": allMatch(podNames, `^\{replicaset\}-[a-z0-9]{5}$`),
				"ownedByReplicaSet": ownedByRS, "unscheduledAtCreation": unscheduledAtCreation,
				"running": running, "runtimes": keys(runtimes),
			})

			// Storage order is etcd's: a resourceVersion is the etcd revision
			// of the write that made it, and revisions only grow.
			depRV, rsRV := addedRevision(deployments.Events()), addedRevision(replicaSets.Events())
			framework.Evidence("storage", map[string]any{
				"deploymentBeforeReplicaSet": depRV > 0 && rsRV > depRV,
				"deploymentRevision":         depRV,
				"replicaSetRevision":         rsRV,
			})
			if auditLog != nil {
				recordFlowAudit(ctx, f, auditLog, from, events)
			}
			if db := f.Etcd(); db != nil {
				key := "/registry/replicasets/" + f.Namespace + "/" + rs.Name
				_, found, err := db.Get(ctx, key)
				framework.ExpectNoError(err, "read %s", key)
				depKey := "/registry/deployments/" + f.Namespace + "/" + deploymentName
				_, depFound, err := db.Get(ctx, depKey)
				framework.ExpectNoError(err, "read %s", depKey)
				framework.Evidence("etcd", map[string]any{"replicaSetStored": found, "deploymentStored": depFound})
			}
		})
})

// recordFlowAudit reads who created what, in which order and when.
func recordFlowAudit(ctx context.Context, f *framework.Framework, log *audit.Log, from audit.Offset, podEvents []observe.Event) {
	ginkgo.By("reading the audit log: who wrote what, and when")
	events, err := log.WaitFor(ctx, from, framework.AuditTimeout, "the Deployment, ReplicaSet and Pod creations and 3 bindings", audit.InNamespace(f.Namespace), func(es []audit.Event) bool {
		return count(es, "create", "pods", "binding", "") >= 3
	})
	framework.ExpectNoError(err, "read the flow from the audit log")

	depCreate := first(events, "create", "deployments", "", "")
	rsCreate := first(events, "create", "replicasets", "", "")
	podCreate := first(events, "create", "pods", "", "")
	binding := first(events, "create", "pods", "binding", "")
	gomega.Expect([]*audit.Event{depCreate, rsCreate, podCreate, binding}).NotTo(gomega.ContainElement(gomega.BeNil()), "the audit log lacks a step of the flow")

	framework.Evidence("writers", map[string]any{
		"deploymentBy":      depCreate.UserAgent,
		"deploymentKubectl": strings.HasPrefix(depCreate.UserAgent, "kubectl/"),
		"deploymentCode":    depCreate.Code(),
		"replicaSetBy":      rsCreate.User.Username,
		"podsBy":            usersOf(events, "create", "pods", ""),
		"podCreates":        count(events, "create", "pods", "", ""),
		"bindingsBy":        usersOf(events, "create", "pods", "binding"),
		"bindings":          count(events, "create", "pods", "binding", ""),
		// Reads a controller makes outside its watches: with an informer
		// cache, there should be none.
		"deploymentControllerGets": count(events, "get", "", "*", deploymentController),
		"replicaSetControllerGets": count(events, "get", "", "*", replicaSetController),
	})
	framework.Evidence("order", map[string]any{
		"replicaSetBeforePods": rsCreate.RequestReceivedTimestamp.Before(podCreate.RequestReceivedTimestamp),
		"podsBeforeBinding":    podCreate.RequestReceivedTimestamp.Before(binding.RequestReceivedTimestamp),
		// The 201 goes out when the create's response completes: had a
		// ReplicaSet or Pod been stored by then, it existed "at the 201".
		"noReplicaSetAt201":       !rsCreate.StageTimestamp.Before(depCreate.StageTimestamp),
		"noPodAt201":              !podCreate.StageTimestamp.Before(depCreate.StageTimestamp),
		"deploymentResponseMs":    framework.Millis(depCreate.StageTimestamp.Sub(depCreate.RequestReceivedTimestamp)),
		"replicaSetStoredAfterMs": framework.Millis(rsCreate.StageTimestamp.Sub(depCreate.RequestReceivedTimestamp)),
	})
	t0 := depCreate.RequestReceivedTimestamp
	readyAt := time.Time{}
	for _, e := range podEvents {
		if p := framework.PodOf(e); p != nil && framework.PodReady(p) {
			readyAt = e.Received
			break
		}
	}
	framework.Evidence("timeline", map[string]any{
		"replicaSetMs": framework.Millis(rsCreate.RequestReceivedTimestamp.Sub(t0)),
		"podMs":        framework.Millis(podCreate.RequestReceivedTimestamp.Sub(t0)),
		"bindingMs":    framework.Millis(binding.RequestReceivedTimestamp.Sub(t0)),
		"readyMs":      framework.Millis(readyAt.Sub(t0)),
	})
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

// controllerRef renders the controller owner reference as generic values.
func controllerRef(refs []metav1.OwnerReference) map[string]any {
	for _, r := range refs {
		if r.Controller != nil && *r.Controller {
			return map[string]any{"apiVersion": r.APIVersion, "kind": r.Kind, "name": r.Name, "uid": string(r.UID),
				"controller": true, "blockOwnerDeletion": r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion}
		}
	}
	return map[string]any{}
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
	if err := yaml.Unmarshal(fixtures.MustRead("deployment.yaml"), &d); err != nil {
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
