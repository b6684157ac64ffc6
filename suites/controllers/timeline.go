package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/kubeproof/kubeproof/framework"
	"github.com/kubeproof/kubeproof/kube/audit"
	"github.com/kubeproof/kubeproof/kube/observe"
)

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

var timeline = framework.DeclareEvidence[timelineEvidence]("timeline", specTiming)
